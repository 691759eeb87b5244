"""Request types and backends. Backends answer requests and know nothing of benchmarks."""

from longread.models.errors import BadRequestError, ContextTooLongError, ModelLoadError, ModelSpecError
from longread.models.registry import BackendOptions, known_specs, load_backend, register_backend
from longread.models.requests import (
    SCHEMA_VERSION,
    Backend,
    ChatPrompt,
    ContinuationScore,
    GenerateRequest,
    GenerateResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    Progress,
    RollingRequest,
    RollingResult,
)

__all__ = [
    "SCHEMA_VERSION",
    "Backend",
    "BackendOptions",
    "BadRequestError",
    "ChatPrompt",
    "ContextTooLongError",
    "ContinuationScore",
    "GenerateRequest",
    "GenerateResult",
    "LoglikelihoodRequest",
    "LoglikelihoodResult",
    "ModelLoadError",
    "ModelSpecError",
    "Progress",
    "RollingRequest",
    "RollingResult",
    "known_specs",
    "load_backend",
    "register_backend",
]
