"""MuLD NarrativeQA and HotpotQA (lengthened): answer a question about a 10,000+-token document.

Baseline (the paper's chunking): the document is cut into chunks of
``chunk_tokens`` (GPT-2 tokens, the length tokenizer), ranked against the
question by ``retriever`` (``tfidf`` cosine or ``bm25``), and the ``top_k``
best are given to the model in document order, joined by ``[…]``, followed by
the question; the model generates the answer (greedy, up to ``answer_tokens``,
stopping at a newline). ``retriever=first`` reads the document from its start
instead (as much as ``first_tokens`` model tokens): the no-retrieval baseline.
What was kept (chunk indices, char spans, tokens, scores) is in every row.
``strategy=whole``: the whole document instead, cut by the model's window from
its end (the start kept, as ``first`` reads it: a story is told from its
start; HotpotQA's pages are shuffled, so no side is better), the question never cut.

The memory curve: besides the document length, each row records where the
answer's evidence lies in the document (0 = start, 1 = end; HotpotQA: the
supporting pages' spans from the builder's metadata; otherwise where a
reference answer occurs — :mod:`.evidence`) and whether the model read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import field_validator

from longread.benchmarks.muld.tasks.chunks import Selection
from longread.benchmarks.muld.tasks.common import MuldRow, MuldSettings, MuldTaskBase, length_tokenizer
from longread.benchmarks.muld.tasks.evidence import locate_evidence
from longread.benchmarks.muld.tasks.inputs import MuldInstance
from longread.benchmarks.muld.tasks.retrieval import retrieve
from longread.benchmarks.muld.tasks.text_scores import TEXT_METRICS, score_text
from longread.evaluation.task import Metric, Sample, SampleRow, TaskSettings
from longread.models.requests import GENERATE, DocumentPrompt, GenerateRequest, GenerateResult

EVIDENCE_EDGES = (0.2, 0.4, 0.6, 0.8)


class QASettings(MuldSettings):
    retriever: Literal["tfidf", "bm25", "first"] = "bm25"
    chunk_tokens: int = 256
    top_k: int = 4
    first_tokens: int = 1024
    """``retriever=first``: model tokens read from the document's start."""
    answer_tokens: int = 32
    template: str = "\n\nQuestion: {question}\nAnswer:"

    @field_validator("template")
    @classmethod
    def _has_question(cls, value: str) -> str:
        if "{question}" not in value:
            raise ValueError("the template must contain {question}")
        return value


class QARow(MuldRow):
    question: str
    retriever: str
    kept: dict[str, Any] | None
    """The retrieval :class:`Selection` (chunks kept, spans, tokens, scores); None for ``first``."""
    document_tokens_original: int
    document_tokens_read: int
    """Model tokens of what the model read of the document (after any cut to its window)."""
    evidence_position: float | None
    evidence_rule: str
    evidence_bucket: str
    evidence_read: bool | None
    """Whether the kept text covers the evidence position (None: evidence not located)."""
    generated_tokens: int
    stopped_by: str
    bleu_stats: list[int]
    rouge_l: float
    meteor: float
    token_f1: float


def evidence_bucket(position: float | None) -> str:
    if position is None:
        return "not located"
    lower = 0.0
    for edge in EVIDENCE_EDGES:
        if position < edge:
            return f"{lower:.1f}–{edge:.1f}"
        lower = edge
    return f"{lower:.1f}–1.0"


class QATask(MuldTaskBase):
    name: ClassVar[str] = "muld/narrativeqa"
    muld_task: ClassVar[str] = "narrativeqa"
    description: ClassVar[str] = (
        "MuLD NarrativeQA: a question on a whole book or script, answered from retrieved chunks "
        "(BLEU, ROUGE-L, METEOR)"
    )
    settings_model: ClassVar[type[TaskSettings]] = QASettings
    row_model: ClassVar[type[SampleRow]] = QARow
    request_kinds: ClassVar[tuple[str, ...]] = (GENERATE,)
    primary_metric: ClassVar[str] = "rouge_l"
    report_extras: ClassVar[tuple[str, ...]] = ("evidence_read",)
    exporter: ClassVar[str] = "longread.benchmarks.muld.export.generate:export_items"
    report_group_by: ClassVar[tuple[str, ...]] = ("evidence_bucket",)

    def __init__(self, settings: TaskSettings | None = None) -> None:
        chosen = settings if settings is not None else QASettings()
        assert isinstance(chosen, QASettings)
        super().__init__(chosen)
        self._settings = chosen
        self._selections: dict[str, Selection] = {}

    @property
    def settings(self) -> QASettings:
        return self._settings

    def _selection(self, instance: MuldInstance) -> Selection | None:
        if self._settings.retriever == "first" or self.whole:
            return None
        cached = self._selections.get(instance.id)
        if cached is None:
            assert instance.question is not None
            cached = retrieve(
                instance.document,
                instance.question,
                method=self._settings.retriever,
                chunk_tokens=self._settings.chunk_tokens,
                top_k=self._settings.top_k,
                tokenizer=length_tokenizer(self._settings.length_tokenizer),
            )
            self._selections[instance.id] = cached
        return cached

    def request(self, sample: Sample[MuldInstance], kind: str) -> GenerateRequest:
        instance = sample.instance
        assert instance.question is not None
        instruction = self._settings.template.format(question=instance.question)
        selection = self._selection(instance)
        if self.whole:
            prompt = self.whole_prompt(instance, instruction)
        elif selection is None:
            prompt = DocumentPrompt(
                instance.document, instruction, cut="right", max_document_tokens=self._settings.first_tokens
            )
        else:
            prompt = DocumentPrompt(selection.joined(instance.document), instruction, cut="right")
        return GenerateRequest(prompt, stop=("\n",), max_tokens=self._settings.answer_tokens)

    def row(self, sample: Sample[MuldInstance], result: Any, kind: str, *, reused: bool) -> QARow:
        if not isinstance(result, GenerateResult):
            raise TypeError(f"{self.name} cannot read a {type(result).__name__}")
        instance = sample.instance
        assert instance.question is not None
        selection = self._selection(instance)
        position, rule, spans = self._evidence(instance)
        prediction = result.text.strip()
        original = result.document_tokens_original or 0
        kept = result.document_tokens_kept or 0
        return QARow(
            **self.common_fields(sample),
            question=instance.question,
            prediction=prediction,
            retriever="whole" if self.whole else self._settings.retriever,
            **self.whole_fields(result.document_tokens_original, result.document_tokens_kept),
            kept=None if selection is None else selection.model_dump(mode="json"),
            document_tokens_original=original,
            document_tokens_read=kept,
            evidence_position=position,
            evidence_rule=rule,
            evidence_bucket=evidence_bucket(position),
            evidence_read=self._evidence_read(instance, selection, position, spans, kept, original),
            generated_tokens=result.n_generated_tokens,
            stopped_by=result.stopped_by,
            **score_text(prediction, instance.references),
        )

    @staticmethod
    def _evidence(instance: MuldInstance) -> tuple[float | None, str, tuple[tuple[int, int], ...]]:
        found = locate_evidence(instance.document, instance.references, instance.metadata)
        return found.position, found.rule, found.spans

    @staticmethod
    def _evidence_read(
        instance: MuldInstance,
        selection: Selection | None,
        position: float | None,
        spans: Sequence[tuple[int, int]],
        kept: int,
        original: int,
    ) -> bool | None:
        """Whether the model read (part of) the evidence: its spans, or its position when no span is known."""
        if position is None:
            return None
        if selection is None:  # read from the start: the share of the document that fitted
            return original > 0 and position <= kept / original
        targets = list(spans) or [(round(position * len(instance.document)),) * 2]
        return any(
            span.start <= end and start <= span.end for span in selection.kept for start, end in targets
        )

    def metrics(self) -> tuple[Metric, ...]:
        return TEXT_METRICS

    def group_extras(self, rows: Sequence[QARow]) -> dict[str, Any]:
        located = [row for row in rows if row.evidence_read is not None]
        return {
            "evidence_read": f"{sum(1 for r in located if r.evidence_read)}/{len(located)}",
            "cut_at_max_tokens": sum(1 for r in rows if r.stopped_by == "max_tokens"),
        }

    def notes(self) -> dict[str, str]:
        s = self._settings
        how = (
            "the whole document cut to the model's window (its start kept), then the question"
            if self.whole
            else f"the first {s.first_tokens} model tokens of the document, then the question"
            if s.retriever == "first"
            else f"chunks of {s.chunk_tokens} {s.length_tokenizer} tokens ranked by {s.retriever} against "
            f"the question; the top {s.top_k} in document order, then the question"
        )
        return {
            **self.common_notes(),
            "baseline": how + f"; answer generated greedily, up to {s.answer_tokens} tokens, to a newline",
            "references": "all references kept; BLEU multi-reference, the others best over references",
        }


class HotpotQATask(QATask):
    name: ClassVar[str] = "muld/hotpotqa"
    muld_task: ClassVar[str] = "hotpotqa"
    description: ClassVar[str] = (
        "MuLD HotpotQA: a multi-hop question over full Wikipedia pages and distractors, answered from "
        "retrieved chunks (BLEU, ROUGE-L, METEOR)"
    )
