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
class GenerateRequest:
    """Greedy generation until a stop string, the end-of-text token or ``max_tokens``."""

    prompt: str | DocumentPrompt
    stop: tuple[str, ...] = ()
    max_tokens: int = 256
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "stop", tuple(self.stop))
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")
        if any(s == "" for s in self.stop):
            raise ValueError("an empty stop string would stop before the first token")


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


LOGLIKELIHOOD = "loglikelihood"
LOGLIKELIHOOD_ROLLING = "loglikelihood_rolling"
GENERATE = "generate"
RANK = "rank"
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
