"""NarrativeXL read-along questions as a task of the generic runner: one book read once, questions on the way.

Instance = one book; samples = its questions in reading order (the runner sends
them in that order, so a read-along backend reads on instead of starting over);
x = retention demand (scenes between the true scene and the reading position), in doubling buckets.
A question asked at ``when_asked`` is answered after reading scenes
``0..when_asked``.

Answering (``answer_mode``):

- ``loglikelihood`` (default): after the scenes read so far comes ``prompt``;
  each option is scored as its continuation (lm-eval's whitespace rule). The
  prediction is the option with the highest score; ``scoring`` picks the score:
  ``mean`` (log-probability per token, the default) or ``sum``. Both are
  recorded on every row. Per-token is the default because the options differ
  in length and a sum favours the short ones: the 5-token "None of the above."
  would beat every 60-token summary by sum alone.
- ``generate``: the authors' numbered question string
  (``RecognitionQuestion.question_string()``) and ``Answer:``; the model
  generates greedily and the first number in its output is the answer.

``options_only``: no book is read, only the question — the shortcut baseline.

A backend with read-along (local HF models) reads the book once; the window
policy (``window``/``stride``, see :class:`~longread.models.requests.ReadingPolicy`)
is recorded per row. By default the window is the model's whole length less the
room the book's questions need (its start token, the longest prompt and option),
measured by the model once per book and recorded per row (``window``,
``question_room``): a 32K model reads about 32K tokens of book before the window
slides. ``-o window=N`` (or ``question_room=N``) overrides it. A backend with
log-likelihood only gets the scenes read so far joined, plus the prompt, cut from
the left to ``window`` tokens (default: the model's length less the options):
policy ``cut-left``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from longread.benchmarks.narrativexl.load import load_reading_books
from longread.benchmarks.narrativexl.readalong_rows import (
    DEFAULT_PROMPT,
    QUESTION_PROMPT,
    SCORING_RULE,
    NarrativeXLRow,
    NarrativeXLSettings,
    judge,
    numbered_question,
    parse_answer_number,
    retention_bucket,
)
from longread.benchmarks.narrativexl.schema import NONE_OF_THE_ABOVE, ReadAlongQuestion, ReadingBook
from longread.evaluation.task import Metric, Sample, SampleRow, TaskSettings, XAxis
from longread.models.requests import (
    LOGLIKELIHOOD,
    READ_ALONG,
    AskedQuestion,
    ContinuationScore,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    ReadAlongRequest,
    ReadAlongResult,
    Reading,
)

TASK = "narrativexl"

__all__ = [
    "DEFAULT_PROMPT",
    "QUESTION_PROMPT",
    "TASK",
    "NarrativeXLRow",
    "NarrativeXLSettings",
    "NarrativeXLTask",
    "parse_answer_number",
    "retention_bucket",
]


class NarrativeXLTask:
    name: ClassVar[str] = TASK
    description: ClassVar[str] = (
        "NarrativeXL read-along: which scene summary was in the book so far, asked while reading (accuracy)"
    )
    settings_model: ClassVar[type[TaskSettings]] = NarrativeXLSettings
    row_model: ClassVar[type[SampleRow]] = NarrativeXLRow
    request_kinds: ClassVar[tuple[str, ...]] = (READ_ALONG, LOGLIKELIHOOD)
    x_axis: ClassVar[XAxis] = XAxis("retention_bucket", "retention demand (scenes ago, bucketed)", "category")
    primary_metric: ClassVar[str] = "accuracy"
    report_extras: ClassVar[tuple[str, ...]] = ("none_is_answer", "predicted_none", "window_cut")
    exporter: ClassVar[str] = "longread.benchmarks.narrativexl.export_readalong:export_items"
    report_group_by: ClassVar[tuple[str, ...]] = ("question_type",)
    """Accuracy by decoy kind (lookahead / change / otherbook) side by side in the report."""

    def __init__(self, settings: TaskSettings | None = None) -> None:
        chosen = settings if settings is not None else NarrativeXLSettings()
        assert isinstance(chosen, NarrativeXLSettings)
        self._settings = chosen
        self._readings: dict[str, Reading] = {}
        self._questions: dict[str, ReadAlongQuestion] = {}
        self._questions_of: str | None = None

    @property
    def settings(self) -> NarrativeXLSettings:
        return self._settings

    def load(self, data: Path) -> list[ReadingBook]:
        return load_reading_books(data)

    def samples(self, instance: ReadingBook) -> list[Sample[ReadingBook]]:
        ordered = sorted(enumerate(instance.questions), key=lambda item: (item[1].when_asked, item[0]))
        return [
            Sample(
                key=question.id,
                instance_id=instance.book_id,
                instance=instance,
                x=retention_bucket(question.retention_demand),
                group=instance.book_id,
            )
            for _, question in ordered
        ]

    # ------------------------------------------------------------ requests

    def _reading(self, book: ReadingBook) -> Reading:
        reading = self._readings.get(book.book_id)
        if reading is None:
            separator = self._settings.scene_separator
            pieces = tuple(scene if k == 0 else separator + scene for k, scene in enumerate(book.scenes))
            reading = Reading(
                book.book_id, pieces, tuple(self._asked(question) for question in book.questions)
            )
            self._readings = {book.book_id: reading}  # one book at a time is read
        return reading

    def _question(self, sample: Sample[ReadingBook]) -> ReadAlongQuestion:
        book = sample.instance
        if self._questions_of != book.book_id:
            self._questions = {question.id: question for question in book.questions}
            self._questions_of = book.book_id
        return self._questions[sample.key]

    def _asked(self, question: ReadAlongQuestion) -> AskedQuestion:
        """What the question puts after the reading (sizes the default window's room)."""
        generate = self._settings.answer_mode == "generate"
        return AskedQuestion(
            prompt=self._prompt(question),
            options=() if generate else self._options(question),
            generate_tokens=self._settings.generate_tokens if generate else 0,
        )

    @staticmethod
    def _options(question: ReadAlongQuestion) -> tuple[str, ...]:
        return tuple(" " + option.text for option in question.options)

    def _prompt(self, question: ReadAlongQuestion) -> str:
        text = (
            numbered_question(question) if self._settings.answer_mode == "generate" else self._settings.prompt
        )
        return text.lstrip() if self._settings.options_only else text

    def request(self, sample: Sample[ReadingBook], kind: str) -> ReadAlongRequest | LoglikelihoodRequest:
        question = self._question(sample)
        settings = self._settings
        scenes_read = 0 if settings.options_only else question.when_asked + 1
        prompt = self._prompt(question)
        generate = settings.answer_mode == "generate"
        options = () if generate else self._options(question)
        if kind == READ_ALONG:
            return ReadAlongRequest(
                reading=self._reading(sample.instance),
                scenes_read=scenes_read,
                prompt=prompt,
                options=options,
                policy=settings.policy,
                generate_tokens=settings.generate_tokens if generate else 0,
                stop=("\n",) if generate else (),
            )
        if kind != LOGLIKELIHOOD:
            raise ValueError(f"{TASK} cannot ask a {kind!r} request")
        if generate:
            raise ValueError(
                "answer_mode=generate needs a model with read-along (a local model); "
                "this one only scores log-likelihoods — use answer_mode=loglikelihood"
            )
        book = sample.instance.scenes[:scenes_read]
        return LoglikelihoodRequest(
            context=settings.scene_separator.join(book) + prompt,
            continuations=options,
            max_context_tokens=settings.window,
            question_chars=len(prompt),
        )

    def control_document(self, instance: ReadingBook) -> tuple[str, str, str]:
        """(book, reading, the whole reading): under a control each question's window is read again from its
        tokens, its distant part perturbed; other books lend tokens to ``replace``. The book is its
        questions' (a reading of one question of a book, as ``longread horizon`` writes them, is that
        book's, so it never lends that book tokens)."""
        book = instance.questions[0].book_id if instance.questions else instance.book_id
        scenes = (scene for scene in instance.scenes if scene)  # a horizon reading empties the early ones
        return book, instance.book_id, self._settings.scene_separator.join(scenes)

    def control_books(self, sample: Sample[ReadingBook]) -> set[str]:
        """The books the question's options come from (its own, and each other-book decoy's): ``replace``
        never borrows from them, or a donor span could hold the very scene a decoy summarises, read just
        before the question."""
        question = self._question(sample)
        return {
            question.book_id,
            *(option.source.book_id for option in question.options if option.source.book_id),
        }

    # ------------------------------------------------------------ rows

    def row(self, sample: Sample[ReadingBook], result: Any, kind: str, *, reused: bool) -> NarrativeXLRow:
        question = self._question(sample)
        settings = self._settings
        common: dict[str, Any] = {
            "key": sample.key,
            "id": question.id,
            "book_id": question.book_id,
            "when_asked": question.when_asked,
            "scenes_read": 0 if settings.options_only else question.when_asked + 1,
            "retention_demand": question.retention_demand,
            "retention_bucket": retention_bucket(question.retention_demand),
            "question_type": question.question_type,
            "answer": question.answer,
            "none_is_answer": question.none_is_answer,
            "option_kinds": [option.source.kind for option in question.options],
            "answer_mode": settings.answer_mode,
            "scoring": settings.scoring,
        }
        if isinstance(result, ReadAlongResult):
            common |= {
                "book_tokens": result.book_tokens,
                "window_start": result.window_start,
                "tokens_seen": result.tokens_seen,
                "rereads": result.rereads,
                "reread_tokens": result.reread_tokens,
                "policy": result.policy,
                "window": result.window,
                "question_room": result.question_room,
            }
        elif isinstance(result, LoglikelihoodResult):
            common |= {
                "book_tokens": result.context_tokens_original,
                "window_start": result.context_tokens_original - result.context_tokens_kept,
                "tokens_seen": result.context_tokens_kept,
                "rereads": 0,
                "reread_tokens": 0,
                "policy": f"cut-left(window={settings.window})",
                "window": settings.window,
            }
        else:
            raise TypeError(f"{TASK} cannot read a {type(result).__name__}")
        if settings.answer_mode == "generate":
            assert isinstance(result, ReadAlongResult)
            text = result.generated or ""
            prediction = parse_answer_number(text, len(question.options))
            return NarrativeXLRow(
                **common, prediction=prediction, correct=prediction == question.answer, generated=text
            )
        return NarrativeXLRow(**common, **_scored(result.scores, question.answer, settings.scoring))

    # ------------------------------------------------------------ results

    def metrics(self) -> tuple[Metric, ...]:
        return (
            Metric(
                "accuracy",
                "sample",
                sample_value=lambda row: bool(row.correct),
                description="the right option has the highest score (by the task's scoring) or the generated "
                "number names it; a tie for first counts as wrong",
            ),
            Metric(
                "accuracy_mean",
                "sample",
                sample_value=lambda row: row.correct_mean,
                description="by log-probability per token",
            ),
            Metric(
                "accuracy_sum",
                "sample",
                sample_value=lambda row: row.correct_sum,
                description="by summed log-probability",
            ),
        )

    def chance(self, rows: Sequence[NarrativeXLRow]) -> float | None:
        """Mean of 1 / options (the authors' questions have 6: chance 1/6)."""
        if not rows:
            return None
        return sum(1.0 / len(row.option_kinds) for row in rows) / len(rows)

    def group_extras(self, rows: Sequence[NarrativeXLRow]) -> dict[str, Any]:
        by_type: dict[str, list[bool]] = {}
        for row in rows:
            by_type.setdefault(row.question_type, []).append(row.correct)
        return {
            "none_is_answer": sum(1 for row in rows if row.none_is_answer),
            "predicted_none": sum(
                1 for row in rows if row.prediction is not None and row.option_kinds[row.prediction] == "none"
            ),
            "window_cut": sum(1 for row in rows if row.window_start > 0),
            "mean_tokens_seen": sum(row.tokens_seen for row in rows) / len(rows) if rows else None,
            "ties": sum(1 for row in rows if row.tie),
            "unparsed": sum(1 for row in rows if row.prediction is None),
            "accuracy_by_type": {kind: sum(v) / len(v) for kind, v in sorted(by_type.items())},
        }

    def notes(self) -> dict[str, str]:
        return {
            "scoring": f"{SCORING_RULE}; default mean: options differ in length and a sum favours short ones "
            f"(the {len(NONE_OF_THE_ABOVE.split())}-word {NONE_OF_THE_ABOVE!r})",
            "reading": "questions are answered after reading scenes 0..when_asked; options_only reads none",
            "window": "policy per row: sliding(window,stride) = read-along keeps the last W book tokens, its "
            "start moving in steps of the stride; cut-left(window) = the context cut to its last W tokens; "
            "no window given: W = the model's length − question_room (its start token + the book's longest "
            "prompt and option, measured by the model; both on every row)",
            "predicted_none": "questions answered 'None of the above.'",
            "window_cut": "questions whose book did not fit the window (window_start > 0)",
        }


def _scored(scores: Sequence[ContinuationScore], answer: int, scoring: str) -> dict[str, Any]:
    sums = [score.logprob for score in scores]
    means = [score.logprob / score.n_tokens for score in scores]
    by_sum = judge(sums, answer)
    by_mean = judge(means, answer)
    chosen = by_mean if scoring == "mean" else by_sum
    return {
        "option_logprobs": sums,
        "option_tokens": [score.n_tokens for score in scores],
        "prediction": chosen[0],
        "correct": chosen[1],
        "tie": chosen[2],
        "prediction_sum": by_sum[0],
        "prediction_mean": by_mean[0],
        "correct_sum": by_sum[1],
        "correct_mean": by_mean[1],
    }
