"""What a backend is asked and what it answers — the contract every backend (local or served) keeps.

The three request types follow lm-evaluation-harness (``loglikelihood``,
``loglikelihood_rolling``, ``generate_until``). A log-likelihood request groups
all continuations of ONE context, so a backend can read the context once.

This module holds the capabilities and the
:class:`Backend` / :class:`Ranker` protocols and re-exports the request and
result types, which live in
:mod:`~longread.models.requests.loglikelihood` (log-likelihood and rolling),
:mod:`~longread.models.requests.generate` (generation and its prompts),
:mod:`~longread.models.requests.rank` (rankers),
:mod:`~longread.models.requests.read_along` (readings, the sliding window and
read-along questions) and :mod:`~longread.models.requests.schema` (the schema
version and the limit check they share).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from longread.models.requests.generate import (
    GenerateRequest,
    GenerateResult,
)
from longread.models.requests.loglikelihood import (
    LoglikelihoodRequest,
    LoglikelihoodResult,
    RollingRequest,
    RollingResult,
)
from longread.models.requests.rank import RankRequest, RankResult

__all__ = [
    "GENERATE",
    "LANGUAGE_MODEL_CAPABILITIES",
    "LOGLIKELIHOOD",
    "LOGLIKELIHOOD_ROLLING",
    "RANK",
    "RANKER_CAPABILITIES",
    "READ_ALONG",
    "Backend",
    "Progress",
    "Ranker",
]

Progress = Callable[[int], None]
"""Called with the number of tokens just processed (so a caller can show tokens/s)."""


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
