"""Read-along requests: questions asked while a long text is read piece by piece through a sliding window.

A :class:`Reading` is shared by every question of one reading; a
:class:`ReadingPolicy` (with :func:`window_start`) says which of its tokens the
model holds; a :class:`ReadAlongRequest` scores options (and may generate) after
the first pieces, and its :class:`ReadAlongResult` records what was held and
re-read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from longread.models.requests.loglikelihood import ContinuationScore
from longread.models.requests.schema import SCHEMA_VERSION, _positive_or_none


@dataclass(frozen=True, slots=True)
class AskedQuestion:
    """What one question asked during a reading puts after it: its prompt, its options, its generation.

    A reading lists them so a backend can size the room a question needs beside the
    reading once for the whole reading, before the first question (see :class:`ReadingPolicy`).
    """

    prompt: str
    options: tuple[str, ...] = ()
    generate_tokens: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple(self.options))


@dataclass(frozen=True, slots=True, eq=False)
class Reading:
    """A text read piece by piece (a book's scenes), shared by every question asked during the reading.

    The model reads the concatenation of ``pieces``, each tokenised on its own
    (without special tokens), so a token never spans two pieces and the tokens
    after k pieces do not depend on what comes later; put separators inside the
    pieces (e.g. ``"\\n\\n"`` in front of every piece after the first). A model
    whose tokenizer adds a start token reads it first, at position 0.

    Equality and hash are by ``id`` alone, so thousands of requests share one
    object cheaply and a backend recognises the reading it is in; two readings
    with the same id must have the same pieces.

    ``questions`` lists what every question asked during the reading puts after it
    (prompt, options, generation), so the default window can leave exactly the room
    the longest of them needs; a reading that lists none gets ``FALLBACK_QUESTION_ROOM``.
    """

    id: str
    pieces: tuple[str, ...]
    questions: tuple[AskedQuestion, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "pieces", tuple(self.pieces))
        object.__setattr__(self, "questions", tuple(self.questions))
        if not self.id:
            raise ValueError("a Reading needs an id")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reading) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("Reading", self.id))


FALLBACK_QUESTION_ROOM = 1024
"""Positions kept for the question when neither the policy nor the reading says how many it needs."""


@dataclass(frozen=True, slots=True)
class ReadingPolicy:
    """How much of a long reading the model holds, and how it slides ("keep the last W tokens").

    ``window`` (W) is the most text tokens of the reading held at once (a start
    token is not counted). ``None`` (the default) means the whole window the model
    has, less the room its questions need::

        W = max_length - room
        room = question_room                                     if given
        room = start token + max over the reading's questions of
               (prompt tokens + max(longest option - 1, generated tokens))   otherwise

    (an option's last token is predicted, never read; the answer's generated tokens
    are read one by one). The room is measured by the backend on the reading's
    :attr:`Reading.questions` once, before its first question, so every question of a
    reading sees the same window; a reading that lists no questions keeps
    ``FALLBACK_QUESTION_ROOM``. ``stride`` (S, default W // 2) is how far the window
    start moves when it moves. After n text tokens have been read the model holds
    tokens ``[start, n)`` with

        start(n) = 0                         if n <= W
        start(n) = ceil((n - W) / S) * S     otherwise,

    i.e. the last W tokens, the start moving in steps of S: once the window is
    full it holds between W - S + 1 and W tokens. Every time ``start`` moves the
    held tokens are read again from scratch (positions restart after the start
    token; cached keys cannot be shifted); the tokens read a second time are
    counted as re-read. With S = W / 2 each book token is read about twice.
    """

    window: int | None = None
    stride: int | None = None
    question_room: int | None = None

    def __post_init__(self) -> None:
        _positive_or_none("window", self.window)
        _positive_or_none("stride", self.stride)
        _positive_or_none("question_room", self.question_room)
        if self.window is not None and self.stride is not None and self.stride > self.window:
            raise ValueError(f"stride ({self.stride}) cannot exceed the window ({self.window})")

    def resolved(self, max_length: int, room: int | None = None) -> tuple[int, int]:
        """(W, S) for a model of ``max_length`` tokens; ``room``: the measured room (see the class)."""
        chosen_room = self.question_room if self.question_room is not None else room
        if chosen_room is None:
            chosen_room = FALLBACK_QUESTION_ROOM
        window = self.window if self.window is not None else max_length - chosen_room
        if window < 1:
            raise ValueError(
                f"the model's window of {max_length} tokens leaves no room for reading beside "
                f"{chosen_room} tokens for the question; give a smaller question_room or a window"
            )
        stride = self.stride if self.stride is not None else max(1, window // 2)
        return window, min(stride, window)

    def describe(self, max_length: int, room: int | None = None) -> str:
        window, stride = self.resolved(max_length, room)
        return f"sliding(window={window},stride={stride})"


def window_start(n_tokens: int, window: int, stride: int) -> int:
    """First held token after ``n_tokens`` have been read (:class:`ReadingPolicy`'s rule)."""
    if n_tokens <= window:
        return 0
    return -(-(n_tokens - window) // stride) * stride


@dataclass(frozen=True, slots=True)
class ReadAlongRequest:
    """Score options after reading the first ``scenes_read`` pieces of a reading, then read on.

    The model reads pieces ``0 .. scenes_read - 1`` (as held by ``policy``), then
    ``prompt``, and scores every option as a continuation of the prompt with
    lm-eval's boundary rule (trailing whitespace of the prompt moves to the front
    of each option; the prompt and options are tokenised together, apart from the
    reading). ``scenes_read = 0`` reads nothing (an options-only baseline). The
    question never changes what is read for later questions.

    ``generate_tokens > 0`` also generates greedily (at most that many tokens,
    stopping at ``stop``) after the prompt, from the same state.
    """

    reading: Reading
    scenes_read: int
    prompt: str
    options: tuple[str, ...]
    policy: ReadingPolicy = ReadingPolicy()
    generate_tokens: int = 0
    stop: tuple[str, ...] = ()
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple(self.options))
        object.__setattr__(self, "stop", tuple(self.stop))
        if not 0 <= self.scenes_read <= len(self.reading.pieces):
            raise ValueError(
                f"scenes_read={self.scenes_read} is outside 0..{len(self.reading.pieces)} "
                f"for reading {self.reading.id!r}"
            )
        if not self.options and self.generate_tokens < 1:
            raise ValueError("a ReadAlongRequest needs options to score or tokens to generate")
        if any(option == "" for option in self.options):
            raise ValueError("an empty option has no tokens to score")
        if self.generate_tokens < 0:
            raise ValueError(f"generate_tokens must be 0 or more, got {self.generate_tokens}")


@dataclass(frozen=True, slots=True)
class ReadAlongResult:
    scores: tuple[ContinuationScore, ...]
    """One per option, in the request's order."""
    book_tokens: int
    """Text tokens of the pieces read so far (before any window)."""
    window_start: int
    """First held reading token: the model saw reading tokens ``[window_start, book_tokens)``."""
    prompt_tokens: int
    """Tokens of the prompt the model read after the reading (its start token not counted)."""
    rereads: int
    """Times the window was rebuilt from scratch in this reading so far."""
    reread_tokens: int
    """Reading tokens read a second (third …) time in this reading so far."""
    processed_tokens: int
    """Tokens this request made the model process: newly read pieces, re-read tokens, prompt, options."""
    policy: str
    """The policy as applied, e.g. ``sliding(window=7168,stride=3584)``."""
    window: int = 0
    """W as applied: the most reading tokens held at once."""
    question_room: int = 0
    """Positions kept beside the reading for the start token and the question (0: a window was given)."""
    generated: str | None = None
    """The greedy generation after the prompt (``generate_tokens > 0``), cut before a stop string."""
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)

    @property
    def book_tokens_kept(self) -> int:
        return self.book_tokens - self.window_start

    @property
    def tokens_seen(self) -> int:
        """Text tokens the model held at the question: the kept reading and the prompt."""
        return self.book_tokens_kept + self.prompt_tokens
