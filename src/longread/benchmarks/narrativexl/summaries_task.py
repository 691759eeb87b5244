"""NarrativeXL's human-study check as a task: given one scene, pick its true summary among distorted ones.

Instance = one book's scenes and summaries (a ``.tagseparated`` file); sample =
one scene that has a true summary and at least one distorted one. The model
reads the scene (the authors' BookChunks text) and ``prompt``; every summary is
scored as a continuation, the true one first. The prediction is the best one by
``scoring`` (``mean`` per token, the default, or ``sum``; both recorded); a tie
for first counts as wrong. Chance is 1 / (1 + distorted summaries) per scene,
averaged. ``options_only`` reads no scene (the shortcut baseline: can the true
summary be told from the distorted ones without the text?).

Scenes whose summary failed (status Fail, or no distorted summary) cannot be
asked; they are counted per book in the results' notes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import field_validator

from longread.benchmarks.narrativexl.load import load_book_summaries
from longread.benchmarks.narrativexl.schema import BookSummaries
from longread.evaluation.task import Metric, Sample, SampleRow, TaskSettings, XAxis
from longread.models.requests import LOGLIKELIHOOD, LoglikelihoodRequest, LoglikelihoodResult

TASK = "narrativexl-summaries"
DEFAULT_PROMPT = "\n\nA summary of the scene above:"


class SummariesSettings(TaskSettings):
    scoring: Literal["mean", "sum"] = "mean"
    """Which score makes ``prediction``/``correct`` (both are always recorded)."""
    options_only: bool = False
    """Read no scene: only the prompt (the shortcut baseline)."""
    prompt: str = DEFAULT_PROMPT
    """What follows the scene; each summary is its continuation."""
    max_scene_tokens: int | None = None
    """Cut the scene from the left to its last N tokens (None: the model's window decides)."""

    @field_validator("prompt")
    @classmethod
    def _visible(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the prompt needs visible text (the summaries are its continuations)")
        return value


class SummariesRow(SampleRow):
    id: str
    book_id: str
    scene: int
    candidates: int
    """1 + the number of distorted summaries."""
    scoring: str
    logprobs: list[float]
    """Each summary's log-probability (nats), the true one first."""
    n_tokens: list[int]
    prediction: int
    correct: bool
    tie: bool
    prediction_sum: int
    prediction_mean: int
    correct_sum: bool
    correct_mean: bool
    context_tokens_original: int
    context_tokens_kept: int


def _judge(values: Sequence[float]) -> tuple[int, bool, bool]:
    """(prediction, correct, tie) with the true summary first; a tie for first is wrong."""
    best = max(values)
    tie = values[0] == best and sum(1 for v in values if v == best) > 1
    return list(values).index(best), values[0] == best and not tie, tie


def askable(book: BookSummaries) -> tuple[list[int], list[int]]:
    """(scenes that can be asked, scenes skipped: Fail status, no summary or no distorted one)."""
    asked, skipped = [], []
    for summaries in book.summaries:
        if summaries.status == "Fail" or not summaries.summary or not summaries.distorted:
            skipped.append(summaries.index)
        else:
            asked.append(summaries.index)
    return asked, skipped


def margin(row: SummariesRow) -> float:
    """The true summary's mean log-prob per token minus the best distorted summary's (nats)."""
    means = [logprob / max(1, tokens) for logprob, tokens in zip(row.logprobs, row.n_tokens, strict=True)]
    return means[0] - max(means[1:])


class SummariesTask:
    name: ClassVar[str] = TASK
    description: ClassVar[str] = (
        "NarrativeXL summaries: given a scene, its true summary against distorted ones (accuracy)"
    )
    settings_model: ClassVar[type[TaskSettings]] = SummariesSettings
    row_model: ClassVar[type[SampleRow]] = SummariesRow
    request_kinds: ClassVar[tuple[str, ...]] = (LOGLIKELIHOOD,)
    x_axis: ClassVar[XAxis] = XAxis("candidates", "summaries to choose from", "linear")
    primary_metric: ClassVar[str] = "accuracy"
    report_extras: ClassVar[tuple[str, ...]] = ("ties",)
    exporter: ClassVar[str] = "longread.benchmarks.narrativexl.export_summaries:export_items"

    def __init__(self, settings: TaskSettings | None = None) -> None:
        chosen = settings if settings is not None else SummariesSettings()
        assert isinstance(chosen, SummariesSettings)
        self._settings = chosen
        self._skipped: dict[str, list[int]] = {}

    @property
    def settings(self) -> SummariesSettings:
        return self._settings

    def load(self, data: Path) -> list[BookSummaries]:
        books = load_book_summaries(data)
        self._skipped = {book.book_id: askable(book)[1] for book in books}
        return books

    def samples(self, instance: BookSummaries) -> list[Sample[BookSummaries]]:
        asked, _ = askable(instance)
        return [
            Sample(
                key=f"{instance.book_id}/{index:04d}",
                instance_id=instance.book_id,
                instance=instance,
                x=1 + len(instance.summaries[index].distorted),
                group=instance.book_id,
                context_budget=index,
            )
            for index in asked
        ]

    def request(self, sample: Sample[BookSummaries], kind: str) -> LoglikelihoodRequest:
        if kind != LOGLIKELIHOOD:
            raise ValueError(f"{TASK} cannot ask a {kind!r} request")
        index = self._scene(sample)
        book = sample.instance
        summaries = book.summaries[index]
        assert summaries.summary is not None
        prompt = self._settings.prompt
        context = prompt.lstrip() if self._settings.options_only else book.scenes[index].text + prompt
        return LoglikelihoodRequest(
            context=context,
            continuations=tuple(" " + text for text in (summaries.summary, *summaries.distorted)),
            max_context_tokens=self._settings.max_scene_tokens,
            question_chars=len(context) if self._settings.options_only else len(prompt),
        )

    def control_document(self, book: BookSummaries) -> tuple[str, str, str]:
        """(book, book, its scenes): what a context control perturbs, and whose other books lend tokens."""
        return book.book_id, book.book_id, "\n\n".join(scene.text for scene in book.scenes)

    @staticmethod
    def _scene(sample: Sample[BookSummaries]) -> int:
        assert sample.context_budget is not None
        return sample.context_budget

    def row(self, sample: Sample[BookSummaries], result: Any, kind: str, *, reused: bool) -> SummariesRow:
        if not isinstance(result, LoglikelihoodResult):
            raise TypeError(f"{TASK} cannot read a {type(result).__name__}")
        sums = [score.logprob for score in result.scores]
        means = [score.logprob / score.n_tokens for score in result.scores]
        by_sum, by_mean = _judge(sums), _judge(means)
        chosen = by_mean if self._settings.scoring == "mean" else by_sum
        return SummariesRow(
            key=sample.key,
            id=sample.key,
            book_id=sample.instance.book_id,
            scene=self._scene(sample),
            candidates=len(sums),
            scoring=self._settings.scoring,
            logprobs=sums,
            n_tokens=[score.n_tokens for score in result.scores],
            prediction=chosen[0],
            correct=chosen[1],
            tie=chosen[2],
            prediction_sum=by_sum[0],
            prediction_mean=by_mean[0],
            correct_sum=by_sum[1],
            correct_mean=by_mean[1],
            context_tokens_original=result.context_tokens_original,
            context_tokens_kept=result.context_tokens_kept,
        )

    def metrics(self) -> tuple[Metric, ...]:
        return (
            Metric(
                "accuracy",
                "sample",
                sample_value=lambda row: bool(row.correct),
                description="the true summary has the highest score (the task's scoring); a tie is wrong",
            ),
            Metric("accuracy_mean", "sample", sample_value=lambda row: bool(row.correct_mean)),
            Metric("accuracy_sum", "sample", sample_value=lambda row: bool(row.correct_sum)),
            Metric(
                "margin",
                "sample",
                sample_value=margin,
                description="the true summary's log-prob per token minus the best distorted one's (nats; "
                "> 0: the true one wins) — what the scene adds shows here before it flips an answer",
            ),
        )

    def chance(self, rows: Sequence[SummariesRow]) -> float | None:
        """Mean of 1 / (1 + distorted summaries) over the scenes asked."""
        return sum(1.0 / row.candidates for row in rows) / len(rows) if rows else None

    def group_extras(self, rows: Sequence[SummariesRow]) -> dict[str, Any]:
        return {
            "ties": sum(1 for row in rows if row.tie),
            "scene_cut": sum(1 for row in rows if row.context_tokens_kept < row.context_tokens_original),
        }

    def notes(self) -> dict[str, str]:
        skipped = {book: scenes for book, scenes in sorted(self._skipped.items()) if scenes}
        total = sum(len(scenes) for scenes in skipped.values())
        listing = "; ".join(f"{book}: {', '.join(map(str, scenes))}" for book, scenes in skipped.items())
        return {
            "skipped_scenes": f"{total} scenes without a true or a distorted summary (status Fail) were not "
            f"asked" + (f" — {listing}" if listing else ""),
            "scoring": "mean = log-probability per token (default: summaries differ in length); sum also "
            "recorded; the true summary is option 0",
            "options_only": "true: no scene read (the shortcut baseline)"
            if self._settings.options_only
            else "false",
        }
