"""MuLD OpenSubtitles EN→DE: translate a whole film's subtitles (BLEU-1/4, ROUGE-L, METEOR).

Baseline (the paper's): the subtitles are cut into chunks of at most
``chunk_tokens`` (GPT-2 tokens) that never break a line (:mod:`.subtitle_chunks`);
each chunk is translated on its own (one request per chunk, all of a film in
one backend call), and the translations are fitted back to each chunk's line
count and joined, so the prediction has the film's line structure. Chunks whose
output had the wrong number of lines are recorded with the rule that fitted
them; over-long lines (a chunk of their own) are recorded too.

Scoring: the builder writes one aligned subtitle unit per line on both sides,
so a prediction is scored line against reference line: BLEU from the summed
statistics of all line pairs (corpus BLEU over segments, as in MT), ROUGE-L,
METEOR and token F1 averaged over the line pairs of the film (whole-film
ROUGE-L would take tens of seconds and ~1 GB per film). A reference whose line
count differs from the source is scored as one segment (``scored_by`` says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from longread.benchmarks.muld.tasks.chunks import Selection
from longread.benchmarks.muld.tasks.common import MuldRow, MuldSettings, MuldTaskBase, length_tokenizer
from longread.benchmarks.muld.tasks.inputs import MuldInstance
from longread.benchmarks.muld.tasks.subtitle_chunks import LineChunk, chunk_selection, join_translations
from longread.benchmarks.muld.tasks.text_scores import TEXT_METRICS, score_text
from longread.evaluation.task import Metric, Sample, SampleRow, TaskSettings
from longread.metrics.text_overlap import sum_bleu_stats
from longread.models.requests import GENERATE, DocumentPrompt, GenerateRequest, GenerateResult
from longread.models.requests.groups import GroupResult, RequestGroup

DEFAULT_PREAMBLE = "Translate these English subtitles into German, line by line.\n\nEnglish:\n"
DEFAULT_INSTRUCTION = "\n\nGerman:\n"


class TranslateSettings(MuldSettings):
    chunk_tokens: int = 128
    preamble: str = DEFAULT_PREAMBLE
    instruction: str = DEFAULT_INSTRUCTION
    output_ratio: float = 2.0
    """A chunk's translation may have up to ``output_ratio`` × its tokens (+ 16)."""
    whole_output_tokens: int = 2048
    """``strategy=whole``: most tokens generated for the translation; the film's subtitles are cut to the
    model's window less these (and the preamble and instruction)."""


class TranslateRow(MuldRow):
    chunks: int
    kept: dict[str, Any]
    """The chunking :class:`Selection`: each chunk's char span and tokens (over-long lines noted)."""
    over_long_lines: int
    line_mismatches: list[dict[str, Any]]
    """Chunks whose output had another line count: chunk, expected, got, how it was fitted."""
    scored_by: str
    line_pairs: int
    generated_tokens: int
    stopped_by_max_tokens: int
    bleu_stats: list[int]
    rouge_l: float
    meteor: float
    token_f1: float


class TranslateTask(MuldTaskBase):
    name: ClassVar[str] = "muld/opensubtitles"
    muld_task: ClassVar[str] = "opensubtitles"
    description: ClassVar[str] = (
        "MuLD OpenSubtitles: a whole film's subtitles EN→DE, chunk by chunk (BLEU, ROUGE-L, METEOR)"
    )
    settings_model: ClassVar[type[TaskSettings]] = TranslateSettings
    row_model: ClassVar[type[SampleRow]] = TranslateRow
    request_kinds: ClassVar[tuple[str, ...]] = (GENERATE,)
    primary_metric: ClassVar[str] = "bleu4"
    report_extras: ClassVar[tuple[str, ...]] = ()
    exporter: ClassVar[str] = "longread.benchmarks.muld.export.generate:export_items"

    def __init__(self, settings: TaskSettings | None = None) -> None:
        chosen = settings if settings is not None else TranslateSettings()
        assert isinstance(chosen, TranslateSettings)
        super().__init__(chosen)
        self._settings = chosen
        self._chunks: dict[str, tuple[list[LineChunk], Selection]] = {}

    @property
    def settings(self) -> TranslateSettings:
        return self._settings

    def _chunked(self, instance: MuldInstance) -> list[LineChunk]:
        return self._chunking(instance)[0]

    def _chunking(self, instance: MuldInstance) -> tuple[list[LineChunk], Selection]:
        cached = self._chunks.get(instance.id)
        if cached is None:
            tokenizer = length_tokenizer(self._settings.length_tokenizer)
            cached = chunk_selection(instance.document, tokenizer, self._settings.chunk_tokens)
            self._chunks[instance.id] = cached
        return cached

    def request(self, sample: Sample[MuldInstance], kind: str) -> RequestGroup:
        s = self._settings
        if self.whole:
            prompt = self.whole_prompt(sample.instance, s.instruction, preamble=s.preamble)
            return RequestGroup(
                (GenerateRequest(prompt, stop=("\n\nEnglish:",), max_tokens=s.whole_output_tokens),)
            )
        return RequestGroup(
            tuple(
                GenerateRequest(
                    DocumentPrompt(chunk.text, s.instruction, preamble=s.preamble, cut="right"),
                    stop=("\n\nEnglish:",),
                    max_tokens=int(chunk.n_tokens * s.output_ratio) + 16,
                )
                for chunk in self._chunked(sample.instance)
            )
        )

    def row(self, sample: Sample[MuldInstance], result: Any, kind: str, *, reused: bool) -> TranslateRow:
        if not isinstance(result, GroupResult) or not all(
            isinstance(p, GenerateResult) for p in result.parts
        ):
            raise TypeError(f"{self.name} cannot read a {type(result).__name__}")
        outputs: list[GenerateResult] = list(result.parts)
        if self.whole:
            return self._whole_row(sample, outputs[0])
        chunks, selection = self._chunking(sample.instance)
        joined = join_translations(chunks, [output.text for output in outputs])
        reference = sample.instance.references[0]
        predicted_lines = joined.text.split("\n")
        reference_lines = reference.split("\n")
        if len(reference_lines) == len(predicted_lines):
            pairs = [
                (p, r)
                for p, r in zip(predicted_lines, reference_lines, strict=True)
                if p.strip() or r.strip()
            ]
            scored_by = "line pairs"
        else:
            pairs = [(joined.text, reference)]
            scored_by = (
                f"whole film (reference has {len(reference_lines)} lines, source {len(predicted_lines)})"
            )
        scores = [score_text(p, [r]) if r.strip() else _empty_reference(p) for p, r in pairs]
        n = max(1, len(scores))
        return TranslateRow(
            **self.common_fields(sample),
            prediction=joined.text,
            chunks=len(chunks),
            kept=selection.model_dump(mode="json"),
            over_long_lines=sum(1 for chunk in chunks if chunk.over_long),
            line_mismatches=[
                {"chunk": m.chunk, "expected": m.expected, "got": m.model_lines, "rule": m.rule}
                for m in joined.mismatches
            ],
            scored_by=scored_by,
            line_pairs=len(pairs),
            generated_tokens=sum(output.n_generated_tokens for output in outputs),
            stopped_by_max_tokens=sum(1 for output in outputs if output.stopped_by == "max_tokens"),
            bleu_stats=sum_bleu_stats(score["bleu_stats"] for score in scores),
            rouge_l=sum(score["rouge_l"] for score in scores) / n,
            meteor=sum(score["meteor"] for score in scores) / n,
            token_f1=sum(score["token_f1"] for score in scores) / n,
        )

    def _whole_row(self, sample: Sample[MuldInstance], output: GenerateResult) -> TranslateRow:
        """One translation of the kept start of the film, scored against the whole film's reference."""
        prediction = output.text.strip()
        return TranslateRow(
            **self.common_fields(sample),
            **self.whole_fields(output.document_tokens_original, output.document_tokens_kept),
            prediction=prediction,
            chunks=1,
            kept={"method": "whole", "cut_side": self.whole_cut, "kept": []},
            over_long_lines=0,
            line_mismatches=[],
            scored_by="whole film (strategy whole: one translation of the subtitles that fitted)",
            line_pairs=1,
            generated_tokens=output.n_generated_tokens,
            stopped_by_max_tokens=int(output.stopped_by == "max_tokens"),
            **score_text(prediction, [sample.instance.references[0]]),
        )

    def metrics(self) -> tuple[Metric, ...]:
        return TEXT_METRICS

    def group_extras(self, rows: Sequence[TranslateRow]) -> dict[str, Any]:
        return {
            "chunks": sum(r.chunks for r in rows),
            "line_mismatches": sum(len(r.line_mismatches) for r in rows),
            "cut_at_max_tokens": sum(r.stopped_by_max_tokens for r in rows),
        }

    def notes(self) -> dict[str, str]:
        s = self._settings
        if self.whole:
            how = (
                "the whole film's subtitles cut to the model's window (its start kept) less "
                f"{s.whole_output_tokens} tokens for the translation, translated at once"
            )
            return {**self.common_notes(), "baseline": how}
        return {
            **self.common_notes(),
            "baseline": f"chunks of ≤ {s.chunk_tokens} {s.length_tokenizer} tokens that never break a line, "
            f"translated one by one, fitted back to their line counts and joined",
            "scoring": "line against reference line: BLEU over all line pairs' summed statistics; ROUGE-L, "
            "METEOR, token F1 averaged over a film's line pairs",
        }


def _empty_reference(prediction: str) -> dict[str, Any]:
    """A source line whose reference is blank (a 1:0 alignment): the prediction's words are all unmatched."""
    from longread.metrics.text_overlap import bleu_stats

    return {"bleu_stats": bleu_stats(prediction, [" "]), "rouge_l": 0.0, "meteor": 0.0, "token_f1": 0.0}
