"""Log-likelihood requests: score given continuations of one context, or a whole text (perplexity).

A :class:`LoglikelihoodRequest` groups all continuations of ONE context, so a
backend can read the context once; each continuation gets a
:class:`ContinuationScore`. A :class:`RollingRequest` scores a whole text in
windows of the model's length, as lm-evaluation-harness does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from longread.models.requests.control import ContextControl, ControlRecord
from longread.models.requests.schema import SCHEMA_VERSION, _positive_or_none


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
    control: ContextControl | None = None
    """A context control (shuffle / replace / drop the context beyond its last K tokens), applied to the
    tokens the model reads after every cut; None = intact."""
    question_chars: int = 0
    """The last N characters of ``context`` are the question or instruction, not the document: a
    control leaves their tokens alone and counts ``keep_last`` before them."""
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)

    def __post_init__(self) -> None:
        # A list passed by mistake would make the request unhashable and mutable.
        object.__setattr__(self, "continuations", tuple(self.continuations))
        if not self.continuations:
            raise ValueError("a LoglikelihoodRequest needs at least one continuation")
        if any(c == "" for c in self.continuations):
            raise ValueError("an empty continuation has no tokens to score")
        _positive_or_none("max_context_tokens", self.max_context_tokens)
        if not 0 <= self.question_chars <= len(self.context):
            raise ValueError(f"question_chars must be within the context's length, got {self.question_chars}")
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
    control: ControlRecord | None = None
    """What the request's context control did (None: the request had none)."""
    read_ids: tuple[tuple[int, ...], tuple[tuple[int, ...], ...]] | None = field(default=None, compare=False)
    """(context as read without its start token, each continuation as scored): ``--save-inputs``."""
    kept_cache: Mapping[str, Any] | None = field(default=None, compare=False)
    """Under a KV-cache press: the press, its ratio and the cache it kept (the row's fields)."""
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
