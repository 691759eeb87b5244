"""MuLD VLSP: summarise a very long scientific paper into its abstract (BLEU-1/4, ROUGE-L, METEOR).

Two baselines (``mode``), both recorded per sample with what the model read:

- ``first``: the model reads the paper's first ``first_tokens`` model tokens
  (the rest is cut, and the cut is recorded) and writes the abstract.
- ``sections``: the paper's sections are found by their headings (contents,
  list of figures/tables and back matter skipped — :mod:`.sections`); each of
  the first ``max_sections`` sections (those left over are recorded) is cut to
  ``section_tokens`` and summarised on its own; the summaries, in document
  order, joined by a space, are the prediction.

``strategy=whole``: the whole paper, cut by the model's window from its end (the
introduction kept: a paper states its contribution first), the instruction never
cut, the abstract generated up to ``summary_tokens``.

No stop string: a model often opens with a blank line, which a ``\n\n`` stop
would turn into an empty summary; generation ends at the end-of-text token or
the token budget (``cut_at_max_tokens`` in the report counts the latter). A paper whose headings cannot
  be found is summarised as one section (recorded as ``sections_found = 0``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from longread.benchmarks.muld.tasks.common import MuldRow, MuldSettings, MuldTaskBase
from longread.benchmarks.muld.tasks.inputs import MuldInstance
from longread.benchmarks.muld.tasks.text_scores import TEXT_METRICS, score_text
from longread.evaluation.task import Metric, Sample, SampleRow, TaskSettings
from longread.models.requests import GENERATE, DocumentPrompt, GenerateRequest, GenerateResult
from longread.models.requests.groups import GroupResult, RequestGroup


class SummariseSettings(MuldSettings):
    mode: Literal["sections", "first"] = "sections"
    first_tokens: int = 1024
    """``first``: model tokens of the paper read."""
    summary_tokens: int = 200
    """``first``: most tokens generated for the abstract."""
    section_tokens: int = 512
    """``sections``: each section is cut to this many model tokens (from its end)."""
    section_summary_tokens: int = 48
    max_sections: int = 12
    instruction: str = "\n\nAbstract:"
    section_instruction: str = "\n\nSummary of this section in one or two sentences:"


class SummariseRow(MuldRow):
    mode: str
    sections_found: int
    sections_skipped: dict[str, int]
    sections_used: list[dict[str, Any]]
    """Per section summarised: title, char span, model tokens before/after the cut, its summary."""
    sections_left_over: int
    document_tokens_read: int
    generated_tokens: int
    stopped_by: list[str]
    bleu_stats: list[int]
    rouge_l: float
    meteor: float
    token_f1: float


@dataclass(frozen=True)
class SectionPlan:
    found: int
    skipped: dict[str, int]
    spans: list[tuple[str, int, int]]
    """(title, start, end) of each section summarised, in document order."""
    left_over: int


class SummariseTask(MuldTaskBase):
    name: ClassVar[str] = "muld/vlsp"
    muld_task: ClassVar[str] = "vlsp"
    description: ClassVar[str] = (
        "MuLD VLSP: a very long paper → its abstract, by sections or from its start (BLEU, ROUGE-L, METEOR)"
    )
    settings_model: ClassVar[type[TaskSettings]] = SummariseSettings
    row_model: ClassVar[type[SampleRow]] = SummariseRow
    request_kinds: ClassVar[tuple[str, ...]] = (GENERATE,)
    primary_metric: ClassVar[str] = "rouge_l"
    report_extras: ClassVar[tuple[str, ...]] = ()
    exporter: ClassVar[str] = "longread.benchmarks.muld.export.generate:export_items"

    def __init__(self, settings: TaskSettings | None = None) -> None:
        chosen = settings if settings is not None else SummariseSettings()
        assert isinstance(chosen, SummariseSettings)
        super().__init__(chosen)
        self._settings = chosen
        self._plans: dict[str, SectionPlan] = {}

    @property
    def settings(self) -> SummariseSettings:
        return self._settings

    def _plan(self, instance: MuldInstance) -> SectionPlan:
        plan = self._plans.get(instance.id)
        if plan is None:
            from longread.benchmarks.muld.tasks.sections import find_sections

            found = find_sections(instance.document)
            kept = [section for section in found if not section.skipped and section.end > section.body_start]
            skipped: dict[str, int] = {}
            for section in found:
                if section.skipped:
                    skipped[section.kind] = skipped.get(section.kind, 0) + 1
            if not kept:
                spans = [("(whole paper)", 0, len(instance.document))]
            else:
                spans = [(s.title, s.start, s.end) for s in kept]
            limit = self._settings.max_sections
            plan = SectionPlan(
                len(found), dict(sorted(skipped.items())), spans[:limit], max(0, len(spans) - limit)
            )
            self._plans[instance.id] = plan
        return plan

    def request(self, sample: Sample[MuldInstance], kind: str) -> GenerateRequest | RequestGroup:
        document = sample.instance.document
        s = self._settings
        if self.whole:
            return GenerateRequest(
                self.whole_prompt(sample.instance, s.instruction), max_tokens=s.summary_tokens
            )
        if s.mode == "first":
            return GenerateRequest(
                DocumentPrompt(document, s.instruction, cut="right", max_document_tokens=s.first_tokens),
                max_tokens=s.summary_tokens,
            )
        return RequestGroup(
            tuple(
                GenerateRequest(
                    DocumentPrompt(
                        document[start:end].strip(),
                        s.section_instruction,
                        cut="right",
                        max_document_tokens=s.section_tokens,
                    ),
                    max_tokens=s.section_summary_tokens,
                )
                for _, start, end in self._plan(sample.instance).spans
            )
        )

    def row(self, sample: Sample[MuldInstance], result: Any, kind: str, *, reused: bool) -> SummariseRow:
        parts: Sequence[Any] = result.parts if isinstance(result, GroupResult) else (result,)
        if not all(isinstance(part, GenerateResult) for part in parts):
            raise TypeError(f"{self.name} cannot read a {type(result).__name__}")
        outputs: list[GenerateResult] = list(parts)
        if self.whole:
            plan = SectionPlan(0, {}, [("(whole paper)", 0, len(sample.instance.document))], 0)
        elif self._settings.mode == "first":
            plan = SectionPlan(0, {}, [("(first tokens)", 0, len(sample.instance.document))], 0)
        else:
            plan = self._plan(sample.instance)
        used = [
            {
                "title": title,
                "start": start,
                "end": end,
                "tokens": output.document_tokens_original,
                "tokens_read": output.document_tokens_kept,
                "summary": output.text.strip(),
            }
            for (title, start, end), output in zip(plan.spans, outputs, strict=True)
        ]
        prediction = " ".join(text for text in (output.text.strip() for output in outputs) if text)
        return SummariseRow(
            **self.common_fields(sample),
            prediction=prediction,
            mode="whole" if self.whole else self._settings.mode,
            **self.whole_fields(outputs[0].document_tokens_original, outputs[0].document_tokens_kept),
            sections_found=plan.found,
            sections_skipped=plan.skipped,
            sections_used=used,
            sections_left_over=plan.left_over,
            document_tokens_read=sum(output.document_tokens_kept or 0 for output in outputs),
            generated_tokens=sum(output.n_generated_tokens for output in outputs),
            stopped_by=[output.stopped_by for output in outputs],
            **score_text(prediction, sample.instance.references),
        )

    def metrics(self) -> tuple[Metric, ...]:
        return TEXT_METRICS

    def group_extras(self, rows: Sequence[SummariseRow]) -> dict[str, Any]:
        return {
            "mean_tokens_read": round(sum(r.document_tokens_read for r in rows) / len(rows)) if rows else 0,
            "cut_at_max_tokens": sum(r.stopped_by.count("max_tokens") for r in rows),
        }

    def notes(self) -> dict[str, str]:
        s = self._settings
        how = (
            f"the whole paper cut to the model's window (its start kept), abstract up to {s.summary_tokens} "
            "tokens"
            if self.whole
            else f"first {s.first_tokens} model tokens read, abstract up to {s.summary_tokens} tokens"
            if s.mode == "first"
            else f"sections found by headings (contents, lists of figures/tables, back matter skipped); the "
            f"first {s.max_sections} summarised one by one, each cut to {s.section_tokens} model tokens, "
            f"{s.section_summary_tokens} tokens per summary, joined in order"
        )
        return {**self.common_notes(), "baseline": how, "references": "arXiv abstract (+ the paper's own)"}
