"""What a backend is asked and what it answers — the contract every backend (local or served) keeps.

The three request types follow lm-evaluation-harness (``loglikelihood``,
``loglikelihood_rolling``, ``generate_until``). A log-likelihood request groups
all continuations of ONE context, so a backend can read the context once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

SCHEMA_VERSION = 1

Progress = Callable[[int], None]
"""Called with the number of tokens just processed (so a caller can show tokens/s)."""


def _positive_or_none(name: str, value: int | None) -> None:
    if value is not None and value < 1:
        raise ValueError(f"{name} must be at least 1 or None, got {value}")


@dataclass(frozen=True, slots=True)
class LoglikelihoodRequest:
    """Score every continuation given the same context.

    Token boundary as in lm-evaluation-harness: trailing whitespace of the
    context moves to the front of each continuation. ``max_context_tokens`` keeps
    the LAST tokens of the context, ``max_continuation_tokens`` the FIRST tokens
    of each continuation; both always apply. ``truncate`` decides what happens
    when context + continuation still do not fit into the model's window: drop
    more context from the left (True) or raise ``ContextTooLongError`` (False).
    """

    context: str
    continuations: tuple[str, ...]
    max_context_tokens: int | None = None
    max_continuation_tokens: int | None = None
    truncate: bool = True
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)

    def __post_init__(self) -> None:
        # A list passed by mistake would make the request unhashable and mutable.
        object.__setattr__(self, "continuations", tuple(self.continuations))
        if not self.continuations:
            raise ValueError("a LoglikelihoodRequest needs at least one continuation")
        if any(c == "" for c in self.continuations):
            raise ValueError("an empty continuation has no tokens to score")
        _positive_or_none("max_context_tokens", self.max_context_tokens)
        _positive_or_none("max_continuation_tokens", self.max_continuation_tokens)


@dataclass(frozen=True, slots=True)
class ContinuationScore:
    logprob: float
    """Sum of the log-probabilities (nats) of the scored continuation tokens."""
    n_tokens: int
    """Tokens scored (after ``max_continuation_tokens``)."""
    n_tokens_original: int
    """Tokens of the whole continuation before truncation."""
    is_greedy: bool
    """Every scored token is the model's argmax."""
    scored_text: str = ""
    """The text of the scored tokens (after the boundary rule and truncation), e.g. to count its words."""


@dataclass(frozen=True, slots=True)
class LoglikelihoodResult:
    scores: tuple[ContinuationScore, ...]
    """One per continuation, in the request's order."""
    context_tokens_original: int
    context_tokens_kept: int
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)


@dataclass(frozen=True, slots=True)
class RollingRequest:
    """Log-likelihood of a whole text (perplexity), in windows of the model's length, lm-eval style."""

    text: str
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)


@dataclass(frozen=True, slots=True)
class RollingResult:
    logprob: float
    n_tokens: int
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)


CutSide = Literal["left", "right", "middle"]


@dataclass(frozen=True, slots=True)
class DocumentPrompt:
    """A prompt whose long ``document`` may be cut but whose ``instruction`` never is.

    The model reads ``preamble + document + instruction`` (put separators inside
    them). When it does not fit, only the document loses tokens, from ``cut``:
    ``left`` drops its start, ``right`` its end, ``middle`` its middle. The result
    records the document's tokens before and after the cut.
    """

    document: str
    instruction: str
    preamble: str = ""
    cut: CutSide = "left"
    max_document_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.cut not in ("left", "right", "middle"):
            raise ValueError(f"cut must be left, right or middle; got {self.cut!r}")
        _positive_or_none("max_document_tokens", self.max_document_tokens)

    @property
    def text(self) -> str:
        return self.preamble + self.document + self.instruction


@dataclass(frozen=True, slots=True)
class ChatPrompt:
    """A conversation the backend renders with the model's own chat template, ending in the model's turn.

    ``messages`` are ``(role, content)`` pairs in order; ``system``, when given,
    becomes a first ``("system", ...)`` message (otherwise the template's own
    default system message, if it has one, applies). The backend adds the
    generation prompt (``add_generation_prompt=True``) and never cuts a chat
    prompt: one that does not fit the window is an error.
    """

    messages: tuple[tuple[str, str], ...]
    system: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple((str(r), str(c)) for r, c in self.messages))
        if not self.messages:
            raise ValueError("a ChatPrompt needs at least one message")
        for role, _ in self.messages:
            if role not in ("system", "user", "assistant"):
                raise ValueError(f"unknown chat role {role!r}; use system, user or assistant")

    def as_messages(self) -> list[dict[str, str]]:
        """The messages as chat templates take them (``[{"role": ..., "content": ...}]``)."""
        head = [] if self.system is None else [{"role": "system", "content": self.system}]
        return head + [{"role": role, "content": content} for role, content in self.messages]


@dataclass(frozen=True, slots=True)
class GenerateRequest:
    """Generation until a stop string, the end-of-text token or ``max_tokens``.

    Greedy by default (``temperature == 0``). With ``temperature > 0`` each token
    is drawn from ``softmax(logits / temperature)`` by the Gumbel-max rule with
    noise from a ``torch.Generator`` seeded with ``seed`` for this request alone,
    so the same request gives the same text again, whatever else is in its batch.
    """

    prompt: str | DocumentPrompt | ChatPrompt
    stop: tuple[str, ...] = ()
    max_tokens: int = 256
    temperature: float = 0.0
    seed: int = 0
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "stop", tuple(self.stop))
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")
        if any(s == "" for s in self.stop):
            raise ValueError("an empty stop string would stop before the first token")
        if not self.temperature >= 0.0:
            raise ValueError(f"temperature must be 0 (greedy) or positive, got {self.temperature}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0


STOPPED_BY_STOP = "stop"
STOPPED_BY_EOS = "eos"
STOPPED_BY_MAX_TOKENS = "max_tokens"


@dataclass(frozen=True, slots=True)
class GenerateResult:
    text: str
    """The generated text, cut before the first stop string."""
    n_prompt_tokens: int
    """Prompt tokens the model saw (after left truncation to fit the window)."""
    n_generated_tokens: int
    stopped_by: str
    """``"stop"``, ``"eos"`` or ``"max_tokens"``."""
    document_tokens_original: int | None = None
    """For a :class:`DocumentPrompt`: the document's tokens before fitting …"""
    document_tokens_kept: int | None = None
    """… and after (the instruction is never cut)."""
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)


@dataclass(frozen=True, slots=True)
class RankRequest:
    """Score candidates as continuations of one context with a model that is not a token-level LM.

    A ranker (SuffixLM) gives each candidate a score, higher = more likely to
    follow; the scores are not log-probabilities. ``max_context_tokens`` keeps the
    LAST tokens of the context and ``max_candidate_tokens`` the FIRST tokens of each
    candidate, counted in the ranker's own tokenizer.
    """

    context: str
    candidates: tuple[str, ...]
    max_context_tokens: int | None = None
    max_candidate_tokens: int | None = None
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "candidates", tuple(self.candidates))
        if not self.candidates:
            raise ValueError("a RankRequest needs at least one candidate")
        _positive_or_none("max_context_tokens", self.max_context_tokens)
        _positive_or_none("max_candidate_tokens", self.max_candidate_tokens)


@dataclass(frozen=True, slots=True)
class RankResult:
    scores: tuple[float, ...]
    """One per candidate, in the request's order; higher is better."""
    context_tokens_original: int
    context_tokens_kept: int
    candidate_tokens: tuple[int, ...]
    """Tokens of each candidate the ranker read (after ``max_candidate_tokens``)."""
    candidate_tokens_original: tuple[int, ...]
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)


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
    """

    id: str
    pieces: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "pieces", tuple(self.pieces))
        if not self.id:
            raise ValueError("a Reading needs an id")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reading) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("Reading", self.id))


@dataclass(frozen=True, slots=True)
class ReadingPolicy:
    """How much of a long reading the model holds, and how it slides ("keep the last W tokens").

    ``window`` (W) is the most text tokens of the reading held at once (a start
    token is not counted); ``None`` means the model's ``max_length`` minus
    ``question_room``, the room kept free for a question and its longest option
    (the question goes into the same window, after the reading). ``stride`` (S,
    default W // 2) is how far the window start moves when it moves. After n
    text tokens have been read the model holds tokens ``[start, n)`` with

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
    question_room: int = 1024

    def __post_init__(self) -> None:
        _positive_or_none("window", self.window)
        _positive_or_none("stride", self.stride)
        if self.question_room < 1:
            raise ValueError(f"question_room must be at least 1, got {self.question_room}")
        if self.window is not None and self.stride is not None and self.stride > self.window:
            raise ValueError(f"stride ({self.stride}) cannot exceed the window ({self.window})")

    def resolved(self, max_length: int) -> tuple[int, int]:
        """(W, S) for a model of ``max_length`` tokens."""
        window = self.window if self.window is not None else max_length - self.question_room
        if window < 1:
            raise ValueError(
                f"the model's window of {max_length} tokens leaves no room for reading beside "
                f"question_room={self.question_room}; give a smaller question_room or a window"
            )
        stride = self.stride if self.stride is not None else max(1, window // 2)
        return window, min(stride, window)

    def describe(self, max_length: int) -> str:
        window, stride = self.resolved(max_length)
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


LOGLIKELIHOOD = "loglikelihood"
LOGLIKELIHOOD_ROLLING = "loglikelihood_rolling"
GENERATE = "generate"
RANK = "rank"
READ_ALONG = "read_along"
LANGUAGE_MODEL_CAPABILITIES = frozenset({LOGLIKELIHOOD, LOGLIKELIHOOD_ROLLING, GENERATE})
"""What a token-level language model answers."""
RANKER_CAPABILITIES = frozenset({RANK})
"""What a ranker (SuffixLM) answers."""


@runtime_checkable
class Ranker(Protocol):
    """A model that only scores candidates for a context (capability ``rank``)."""

    name: str
    capabilities: frozenset[str]

    def rank(self, requests: Sequence[RankRequest], progress: Progress | None = None) -> list[RankResult]: ...

    def count_tokens(self, text: str) -> int: ...

    def describe(self) -> dict[str, str]: ...


@runtime_checkable
class Backend(Protocol):
    """A language model that answers requests. It knows nothing of benchmarks."""

    name: str
    max_length: int
    capabilities: frozenset[str]

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], progress: Progress | None = None
    ) -> list[LoglikelihoodResult]: ...

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], progress: Progress | None = None
    ) -> list[RollingResult]: ...

    def generate(
        self, requests: Sequence[GenerateRequest], progress: Progress | None = None
    ) -> list[GenerateResult]: ...

    def count_tokens(self, text: str) -> int: ...

    def describe(self) -> dict[str, str]:
        """Model spec, dtype, device, mode, weights hash or path — goes into run configs."""
        ...
