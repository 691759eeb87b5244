"""MuLD style change: where does the author change in a document of 1–4 authors' paragraphs? (PAN F1)

The baseline is a same-author classifier on each pair of adjacent paragraphs
(a ``pair_scores`` backend: ``--model style:stylometric``, ``style:minilm`` or
``style:MODEL.json`` trained with ``longread train style-pairs``); a change is
predicted where the same-author probability falls under ``threshold`` (the
backend's own, learned on training data, unless set here). Truth is the PAN
``changes`` list stored as JSON in the record's first reference. PAN's F1 is
pooled over all boundaries of all documents (the official evaluator's rule,
:mod:`longread.metrics.style_change`); whether a document has any change at
all (single vs several authors) is scored too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import field_validator

from longread.benchmarks.muld.tasks.common import MuldRow, MuldSettings, MuldTaskBase
from longread.benchmarks.muld.tasks.inputs import MuldInstance
from longread.errors import BadInputError
from longread.evaluation.task import Metric, Sample, SampleRow, TaskSettings
from longread.metrics.style_change import change_counts, style_change_f1_from_counts, sum_change_counts
from longread.models.style_pairs.requests import PAIR_SCORES, PairScoreRequest, PairScoreResult


class StyleChangeSettings(MuldSettings):
    threshold: float | None = None
    """A change where P(same author) < threshold; None: the backend's learned threshold."""

    @field_validator("strategy")
    @classmethod
    def _pairs_only(cls, value: str) -> str:
        if value == "whole":
            raise ValueError(
                "style change is judged by a same-author classifier on paragraph pairs, which reads no "
                "window; strategy=whole does not apply (use strategy=chunks)"
            )
        return value


class StyleChangeRow(MuldRow):
    paragraphs: int
    authors: int
    changes: list[int]
    """Truth, one 0/1 per boundary between adjacent paragraphs."""
    same_author: list[float]
    threshold: float
    multi_author_true: bool
    multi_author_pred: bool
    change_counts: list[int]
    """[TP, FP, FN, TN] of changes over this document's boundaries (summed for PAN's pooled F1)."""


def truth_of(instance: MuldInstance) -> dict[str, Any]:
    """The PAN truth stored as JSON in the first reference; an error naming the file and line when it
    is not PAN truth or does not fit the text."""

    def bad(problem: str) -> BadInputError:
        return BadInputError(
            instance.source, problem, "rebuild the file or fix this line's truth", line=instance.line
        )

    try:
        truth = json.loads(instance.references[0])
    except json.JSONDecodeError as exc:
        raise bad(f"the reference is not PAN truth JSON ({exc.msg})") from None
    if not isinstance(truth, dict) or not isinstance(truth.get("changes"), list):
        raise bad("the reference is not PAN truth JSON with a 'changes' list")
    paragraphs = paragraphs_of(instance.document)
    if len(truth["changes"]) != len(paragraphs) - 1:
        raise bad(
            f"PAN truth has {len(truth['changes'])} changes but the document has {len(paragraphs)} "
            f"paragraphs (changes must be paragraphs − 1)"
        )
    return truth


def paragraphs_of(document: str) -> list[str]:
    """One paragraph per line, as PAN problem files and MuLD style-change inputs hold them."""
    return [line for line in document.split("\n") if line.strip()]


class StyleChangeTask(MuldTaskBase):
    name: ClassVar[str] = "muld/style-change"
    muld_task: ClassVar[str] = "style-change"
    description: ClassVar[str] = (
        "MuLD style change: author changes between paragraphs, by a same-author pair classifier (PAN F1)"
    )
    settings_model: ClassVar[type[TaskSettings]] = StyleChangeSettings
    row_model: ClassVar[type[SampleRow]] = StyleChangeRow
    request_kinds: ClassVar[tuple[str, ...]] = (PAIR_SCORES,)
    primary_metric: ClassVar[str] = "pan_f1"
    report_extras: ClassVar[tuple[str, ...]] = ()
    exporter: ClassVar[str] = "longread.benchmarks.muld.export.style:export_items"

    def __init__(self, settings: TaskSettings | None = None) -> None:
        chosen = settings if settings is not None else StyleChangeSettings()
        assert isinstance(chosen, StyleChangeSettings)
        super().__init__(chosen)
        self._settings = chosen
        self._backend_threshold: float | None = None

    @property
    def settings(self) -> StyleChangeSettings:
        return self._settings

    def request(self, sample: Sample[MuldInstance], kind: str) -> PairScoreRequest:
        truth_of(sample.instance)  # a truth that does not match its text fails this sample, by name
        return PairScoreRequest(tuple(paragraphs_of(sample.instance.document)))

    def row(self, sample: Sample[MuldInstance], result: Any, kind: str, *, reused: bool) -> StyleChangeRow:
        if not isinstance(result, PairScoreResult):
            raise TypeError(f"{self.name} cannot read a {type(result).__name__}")
        truth = truth_of(sample.instance)
        threshold = self._settings.threshold if self._settings.threshold is not None else result.threshold
        predicted = [int(p < threshold) for p in result.same_author]
        changes = [int(c) for c in truth["changes"]]
        return StyleChangeRow(
            **self.common_fields(sample),
            prediction=predicted,
            paragraphs=len(changes) + 1,
            authors=int(truth.get("authors", 1 + sum(changes))),
            changes=changes,
            same_author=[round(float(p), 6) for p in result.same_author],
            threshold=threshold,
            multi_author_true=any(changes),
            multi_author_pred=any(predicted),
            change_counts=list(change_counts(changes, predicted, sample.instance.id)),
        )

    def metrics(self) -> tuple[Metric, ...]:
        return (
            Metric(
                "pan_f1",
                "corpus",
                corpus_value=lambda rows: (
                    style_change_f1_from_counts(sum_change_counts(r.change_counts for r in rows))
                    if rows
                    else None
                ),
                description="PAN style-change F1 over all paragraph boundaries (official evaluator's rule)",
            ),
            Metric(
                "multi_author_accuracy",
                "sample",
                sample_value=lambda row: bool(row.multi_author_true == row.multi_author_pred),
                description="single- vs multi-author told right (any change predicted ⇔ any change true)",
            ),
        )

    def chance(self, rows: Sequence[StyleChangeRow]) -> float | None:
        return None

    def group_extras(self, rows: Sequence[StyleChangeRow]) -> dict[str, Any]:
        boundaries = sum(len(r.changes) for r in rows)
        return {
            "boundaries": boundaries,
            "true_changes": sum(sum(r.changes) for r in rows),
            "predicted_changes": sum(sum(r.prediction) for r in rows),
        }

    def notes(self) -> dict[str, str]:
        rule = (
            f"a change where P(same author) < {self._settings.threshold}"
            if self._settings.threshold is not None
            else "a change where P(same author) < the classifier's learned threshold (see the run's model)"
        )
        return {**self.common_notes(), "baseline": rule}
