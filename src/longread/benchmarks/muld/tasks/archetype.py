"""MuLD character archetype: is this character of a movie script the Hero or the Villain? (F1)

Baseline (the paper's): the script is cut into chunks of ``chunk_tokens``
(GPT-2 tokens); the chunks holding the character's first, last and most
frequent mention are kept (:mod:`.mentions`; what was kept is in every row) and
shown in document order, followed by ``prompt``. The answer is, by ``method``:

- ``loglikelihood`` (default): the label whose continuation (`` Hero`` /
  `` Villain``) has the higher log-probability; a tie is recorded and counts as
  wrong (predicted ``tie``).
- ``generate``: a few tokens generated greedily; the first of hero/protagonist
  or villain/antagonist in them is the label, anything else is ``unparsed``
  (counted wrong, and as a class of its own in the macro F1).

A character never mentioned in the script keeps no chunk (``mentions = 0``):
the model then answers from the name alone, and the report counts such samples.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from longread.benchmarks.muld.tasks.chunks import Selection
from longread.benchmarks.muld.tasks.common import MuldRow, MuldSettings, MuldTaskBase, length_tokenizer
from longread.benchmarks.muld.tasks.inputs import MuldInstance
from longread.benchmarks.muld.tasks.mentions import mention_chunks
from longread.evaluation.task import Metric, Sample, SampleRow, TaskSettings
from longread.metrics.classification import classification_scores
from longread.models.requests import (
    GENERATE,
    LOGLIKELIHOOD,
    DocumentPrompt,
    GenerateRequest,
    GenerateResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
)

LABELS = ("Hero", "Villain")
_LABEL_WORDS = re.compile(r"\b(hero|protagonist|villain|antagonist)\b", re.IGNORECASE)
_CANONICAL = {"hero": "Hero", "protagonist": "Hero", "villain": "Villain", "antagonist": "Villain"}


class ArchetypeSettings(MuldSettings):
    method: Literal["loglikelihood", "generate"] = "loglikelihood"
    chunk_tokens: int = 256
    prompt: str = "\n\nQuestion: In this script, is {character} the hero or the villain?\nAnswer:"


class ArchetypeRow(MuldRow):
    character: str
    method: str
    truth: str
    correct: bool
    mentions: int
    kept: dict[str, Any]
    """The mention :class:`Selection` (chunks kept with roles first/last/most-mentions, spans, tokens)."""
    logprobs: list[float] | None
    generated: str | None
    context_tokens_original: int
    context_tokens_kept: int


def canonical_label(text: str) -> str:
    """Hero/Protagonist → Hero, Villain/Antagonist → Villain (the builders' labels); others unchanged."""
    return _CANONICAL.get(text.strip().lower(), text.strip())


class ArchetypeTask(MuldTaskBase):
    name: ClassVar[str] = "muld/character-archetype"
    muld_task: ClassVar[str] = "character-archetype"
    description: ClassVar[str] = (
        "MuLD character archetype: Hero or Villain, from the chunks that mention the character (F1)"
    )
    settings_model: ClassVar[type[TaskSettings]] = ArchetypeSettings
    row_model: ClassVar[type[SampleRow]] = ArchetypeRow
    request_kinds: ClassVar[tuple[str, ...]] = (LOGLIKELIHOOD, GENERATE)
    whole_cut: ClassVar[Literal["left", "right", "middle"]] = "left"
    whole_cut_reason: ClassVar[str] = (
        "the end of the script is kept (its start is cut): a hero or villain shows in the climax, and a "
        "log-likelihood context can only lose its start"
    )
    primary_metric: ClassVar[str] = "macro_f1"
    report_extras: ClassVar[tuple[str, ...]] = ("no_mention",)
    exporter: ClassVar[str] = "longread.benchmarks.muld.export.archetype:export_items"

    def __init__(self, settings: TaskSettings | None = None) -> None:
        chosen = settings if settings is not None else ArchetypeSettings()
        assert isinstance(chosen, ArchetypeSettings)
        super().__init__(chosen)
        self._settings = chosen
        # The method decides what the model must answer (read by the runner before any work).
        self.request_kinds = (LOGLIKELIHOOD,) if chosen.method == "loglikelihood" else (GENERATE,)  # type: ignore[misc]
        self._selections: dict[str, Selection] = {}

    @property
    def settings(self) -> ArchetypeSettings:
        return self._settings

    def _selection(self, instance: MuldInstance) -> Selection:
        cached = self._selections.get(instance.id)
        if cached is None:
            assert instance.question is not None
            cached = mention_chunks(
                instance.document,
                instance.question,
                tokenizer=length_tokenizer(self._settings.length_tokenizer),
                chunk_tokens=self._settings.chunk_tokens,
            )
            self._selections[instance.id] = cached
        return cached

    def request(self, sample: Sample[MuldInstance], kind: str) -> LoglikelihoodRequest | GenerateRequest:
        instance = sample.instance
        assert instance.question is not None
        prompt = self._settings.prompt.format(character=instance.question)
        if self.whole and kind != LOGLIKELIHOOD:
            return GenerateRequest(self.whole_prompt(instance, prompt), stop=("\n",), max_tokens=6)
        context = instance.document if self.whole else self._selection(instance).joined(instance.document)
        if kind == LOGLIKELIHOOD:
            return LoglikelihoodRequest(
                context=context + prompt,
                continuations=tuple(f" {label}" for label in LABELS),
                question_chars=len(prompt),
            )
        return GenerateRequest(DocumentPrompt(context, prompt, cut="left"), stop=("\n",), max_tokens=6)

    def row(self, sample: Sample[MuldInstance], result: Any, kind: str, *, reused: bool) -> ArchetypeRow:
        instance = sample.instance
        assert instance.question is not None
        truth = canonical_label(instance.references[0])
        logprobs: list[float] | None = None
        generated: str | None = None
        if isinstance(result, LoglikelihoodResult):
            logprobs = [score.logprob for score in result.scores]
            best = max(logprobs)
            winners = [label for label, value in zip(LABELS, logprobs, strict=True) if value == best]
            prediction = winners[0] if len(winners) == 1 else "tie"
            original, kept = result.context_tokens_original, result.context_tokens_kept
            cut = self.whole_fields(original, kept)  # the prompt, at the end, is never cut from the left
        elif isinstance(result, GenerateResult):
            generated = result.text
            found = _LABEL_WORDS.search(result.text)
            prediction = _CANONICAL[found.group(1).lower()] if found else "unparsed"
            cut = self.whole_fields(result.document_tokens_original, result.document_tokens_kept)
            original = result.document_tokens_original or 0
            kept = result.document_tokens_kept or 0
        else:
            raise TypeError(f"{self.name} cannot read a {type(result).__name__}")
        selection = self._selection(instance)
        return ArchetypeRow(
            **self.common_fields(sample),
            prediction=prediction,
            character=instance.question,
            method=self._settings.method,
            truth=truth,
            correct=prediction == truth,
            mentions=int(selection.settings.get("mentions") or 0),
            kept={"method": "whole", "cut_side": self.whole_cut, "kept": []}
            if self.whole
            else selection.model_dump(mode="json"),
            **cut,
            logprobs=logprobs,
            generated=generated,
            context_tokens_original=original,
            context_tokens_kept=kept,
        )

    def metrics(self) -> tuple[Metric, ...]:
        return (
            Metric(
                "macro_f1",
                "corpus",
                corpus_value=lambda rows: (
                    classification_scores([r.truth for r in rows], [r.prediction for r in rows]).macro_f1
                    if rows
                    else None
                ),
                description="macro F1 over the labels in truth ∪ predictions (tie/unparsed are classes), 0–1",
            ),
            Metric("accuracy", "sample", sample_value=lambda row: bool(row.correct)),
        )

    def chance(self, rows: Sequence[ArchetypeRow]) -> float | None:
        return 1 / len(LABELS)

    def group_extras(self, rows: Sequence[ArchetypeRow]) -> dict[str, Any]:
        return {
            "no_mention": sum(
                1 for r in rows if not (r.mentions if r.strategy == "whole" else r.kept["kept"])
            ),
            "heroes": sum(1 for r in rows if r.truth == "Hero"),
            "villains": sum(1 for r in rows if r.truth == "Villain"),
        }

    def notes(self) -> dict[str, str]:
        s = self._settings
        return {
            **self.common_notes(),
            "baseline": f"the whole script cut to the model's window from the {self.whole_cut}, then the "
            f"question; answered by {s.method}"
            if self.whole
            else f"chunks of {s.chunk_tokens} {s.length_tokenizer} tokens holding the character's "
            f"first, last and most frequent mention, in order, then the question; answered by {s.method}",
            "labels": "Hero/Protagonist → Hero, Villain/Antagonist → Villain",
        }
