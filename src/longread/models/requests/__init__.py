"""What a backend is asked and what it answers — the contract every backend (local or served) keeps.

The three request types follow lm-evaluation-harness (``loglikelihood``,
``loglikelihood_rolling``, ``generate_until``). A log-likelihood request groups
all continuations of ONE context, so a backend can read the context once.

This module is the public entry point: it holds the capabilities and the
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

from longread.models.requests.generate import (
    STOPPED_BY_EOS,
    STOPPED_BY_MAX_TOKENS,
    STOPPED_BY_STOP,
    ChatPrompt,
    CutSide,
    DocumentPrompt,
    GenerateRequest,
    GenerateResult,
)
from longread.models.requests.loglikelihood import (
    ContinuationScore,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    RollingRequest,
    RollingResult,
)
from longread.models.requests.protocols import (
    GENERATE,
    LANGUAGE_MODEL_CAPABILITIES,
    LOGLIKELIHOOD,
    LOGLIKELIHOOD_ROLLING,
    RANK,
    RANKER_CAPABILITIES,
    READ_ALONG,
    Backend,
    Progress,
    Ranker,
)
from longread.models.requests.rank import RankRequest, RankResult
from longread.models.requests.read_along import (
    FALLBACK_QUESTION_ROOM,
    AskedQuestion,
    ReadAlongRequest,
    ReadAlongResult,
    Reading,
    ReadingPolicy,
    window_start,
)
from longread.models.requests.schema import SCHEMA_VERSION

__all__ = [
    "FALLBACK_QUESTION_ROOM",
    "GENERATE",
    "LANGUAGE_MODEL_CAPABILITIES",
    "LOGLIKELIHOOD",
    "LOGLIKELIHOOD_ROLLING",
    "RANK",
    "RANKER_CAPABILITIES",
    "READ_ALONG",
    "SCHEMA_VERSION",
    "STOPPED_BY_EOS",
    "STOPPED_BY_MAX_TOKENS",
    "STOPPED_BY_STOP",
    "AskedQuestion",
    "Backend",
    "ChatPrompt",
    "ContinuationScore",
    "CutSide",
    "DocumentPrompt",
    "GenerateRequest",
    "GenerateResult",
    "LoglikelihoodRequest",
    "LoglikelihoodResult",
    "Progress",
    "RankRequest",
    "RankResult",
    "Ranker",
    "ReadAlongRequest",
    "ReadAlongResult",
    "Reading",
    "ReadingPolicy",
    "RollingRequest",
    "RollingResult",
    "window_start",
]
