"""What a backend is asked and what it answers: the request and result types and the :class:`Backend`
protocol every backend (local or served) keeps; the contract is described in :mod:`.protocols`.
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
