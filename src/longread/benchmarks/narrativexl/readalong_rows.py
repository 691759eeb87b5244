"""What a NarrativeXL read-along run is set with and writes: its settings, its row, and how a row's answer
is judged (:mod:`longread.benchmarks.narrativexl.task` asks the questions)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import field_validator

from longread.benchmarks.narrativexl.schema import ReadAlongQuestion
from longread.evaluation.task import SampleRow, TaskSettings
from longread.models.requests import ReadingPolicy

DEFAULT_PROMPT = "\n\nQuestion: Which of the following scenes was in the book?\nAnswer:"
QUESTION_PROMPT = "Which of the following scenes was in the book?\n"
"""The authors' question line (``RecognitionQuestion.question_string``)."""
GENERATE_SUFFIX = "Answer:"
SCORING_RULE = (
    "the option with the highest score; a tie for first counts as wrong; mean = log-probability per token"
)


class NarrativeXLSettings(TaskSettings):
    scoring: Literal["mean", "sum"] = "mean"
    """Which score makes ``prediction``/``correct`` (both are always recorded)."""
    answer_mode: Literal["loglikelihood", "generate"] = "loglikelihood"
    options_only: bool = False
    """Read no book: only the question (the shortcut baseline)."""
    window: int | None = None
    """Book tokens held at once; None: the model's whole window less the room the book's questions need."""
    stride: int | None = None
    """How far the window start moves when the book outgrows it; None: window // 2."""
    question_room: int | None = None
    """Positions kept free for the question when ``window`` is None; None: measured by the model on the
    book's questions (its start token + the longest prompt and option or answer), recorded per row."""
    prompt: str = DEFAULT_PROMPT
    """Log-likelihood mode: what follows the scenes read so far; options are its continuations."""
    scene_separator: str = "\n\n"
    """Put between scenes when the book is read."""
    generate_tokens: int = 4
    """Generate mode: most tokens generated for the answer number."""

    @field_validator("window", "stride", "generate_tokens", "question_room")
    @classmethod
    def _positive(cls, value: int | None) -> int | None:
        if value is not None and value < 1:
            raise ValueError("must be at least 1")
        return value

    @field_validator("prompt")
    @classmethod
    def _visible(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the prompt needs visible text (the options are its continuations)")
        return value

    @property
    def policy(self) -> ReadingPolicy:
        return ReadingPolicy(window=self.window, stride=self.stride, question_room=self.question_room)


class NarrativeXLRow(SampleRow):
    """One read-along question answered at its reading position."""

    id: str
    book_id: str
    when_asked: int
    scenes_read: int
    """Scenes the model read before the question (0 with options_only)."""
    retention_demand: int
    retention_bucket: str = ""
    """The x-axis: retention demand in doubling buckets (0, 1, 2–3, 4–7, …), see :func:`retention_bucket`."""
    question_type: str
    answer: int
    """0-based index of the right option."""
    none_is_answer: bool
    option_kinds: list[str]
    answer_mode: str
    scoring: str
    prediction: int | None
    """By the task's scoring (or the generated number); None: no number could be read."""
    correct: bool
    option_logprobs: list[float] | None = None
    option_tokens: list[int] | None = None
    prediction_sum: int | None = None
    prediction_mean: int | None = None
    correct_sum: bool | None = None
    correct_mean: bool | None = None
    tie: bool = False
    generated: str | None = None
    book_tokens: int
    """Text tokens of the scenes read so far."""
    window_start: int
    """First book token the model held (0: nothing was cut)."""
    tokens_seen: int
    """Text tokens the model held at the question: the kept book and the prompt."""
    rereads: int
    reread_tokens: int
    policy: str
    window: int | None = None
    """Book tokens the model could hold at once (read-along); None: the context cut to the model's length."""
    question_room: int | None = None
    """Positions the default window left beside the book for the start token and the question
    (model length − window); 0: the window was given."""


def judge(values: Sequence[float], answer: int) -> tuple[int, bool, bool]:
    """(prediction, correct, tie): the first best option; a tie for first with the answer is wrong."""
    best = max(values)
    prediction = list(values).index(best)
    tie = values[answer] == best and sum(1 for v in values if v == best) > 1
    return prediction, values[answer] == best and not tie, tie


def retention_bucket(demand: int) -> str:
    """Doubling buckets (0, 1, 2–3, 4–7 …): a book of 150 scenes gives ~9 points, each with questions."""
    if demand < 0:
        raise ValueError(f"a retention demand is never negative, got {demand}")
    if demand < 2:
        return str(demand)
    low = 1 << (demand.bit_length() - 1)
    return f"{low}–{2 * low - 1}"


def parse_answer_number(text: str, n_options: int) -> int | None:
    """0-based option of the first number in ``text`` (1-based there), None if there is none in range."""
    found = re.search(r"\d+", text)
    if found is None:
        return None
    number = int(found.group())
    return number - 1 if 1 <= number <= n_options else None


def numbered_question(question: ReadAlongQuestion) -> str:
    """The authors' question string and ``Answer:``, after a blank line."""
    lines = "".join(f"{k}) {option.text}\n" for k, option in enumerate(question.options, start=1))
    return "\n\n" + QUESTION_PROMPT + lines + GENERATE_SUFFIX
