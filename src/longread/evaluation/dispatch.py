"""Which request kind a backend can answer for a task, how to ask it, and what a result cost.

Backends declare ``capabilities`` (a language model: log-likelihood, rolling
log-likelihood, generation; a ranker: ``rank``). A task lists the kinds it can
use; the first one the backend has is chosen before any work starts, and a
backend with none of them is a clear error then, not after an hour of reading.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from longread.errors import LongreadError
from longread.models.requests import (
    GENERATE,
    LANGUAGE_MODEL_CAPABILITIES,
    LOGLIKELIHOOD,
    LOGLIKELIHOOD_ROLLING,
    RANK,
    READ_ALONG,
    GenerateResult,
    LoglikelihoodResult,
    Progress,
    RankResult,
    ReadAlongResult,
    RollingResult,
)
from longread.models.requests.groups import GroupResult, ask_grouped


class CapabilityError(LongreadError):
    """The backend cannot answer any request kind the task needs."""


def capabilities_of(backend: object) -> frozenset[str]:
    declared = getattr(backend, "capabilities", None)
    if isinstance(declared, frozenset | set):
        return frozenset(str(kind) for kind in declared)
    # A third-party backend written before capabilities existed: judge it by its methods.
    return frozenset(kind for kind in LANGUAGE_MODEL_CAPABILITIES if callable(getattr(backend, kind, None)))


def choose_request_kind(task_name: str, wanted: Sequence[str], backend: object) -> str:
    have = capabilities_of(backend)
    for kind in wanted:
        if kind in have:
            return kind
    name = getattr(backend, "name", type(backend).__name__)
    raise CapabilityError(
        f"model {name!r} answers {', '.join(sorted(have)) or 'nothing'}, but task {task_name!r} needs "
        f"one of: {', '.join(wanted)}. Choose a model that can "
        f"({'a language model' if RANK not in wanted else 'a language model or a ranker such as suffixlm'})."
    )


def ask(backend: Any, kind: str, requests: Sequence[Any], progress: Progress | None) -> list[Any]:
    """Send ``requests`` (all of one kind; :class:`RequestGroup` parts flattened into the same call)."""
    return ask_grouped(lambda flat: _ask_flat(backend, kind, flat, progress), requests)


def _ask_flat(backend: Any, kind: str, requests: Sequence[Any], progress: Progress | None) -> list[Any]:
    if kind == LOGLIKELIHOOD:
        answers = backend.loglikelihood(requests, progress)
    elif kind == RANK:
        answers = backend.rank(requests, progress)
    elif kind == GENERATE:
        answers = backend.generate(requests, progress)
    elif kind == LOGLIKELIHOOD_ROLLING:
        answers = backend.loglikelihood_rolling(requests, progress)
    elif kind == READ_ALONG:
        answers = backend.read_along(requests, progress)
    elif kind in capabilities_of(backend) and callable(getattr(backend, kind, None)):
        # A kind only some backends answer (a style classifier's ``pair_scores``): its method has its name.
        answers = getattr(backend, kind)(requests, progress)
    else:
        raise ValueError(f"unknown request kind {kind!r}")
    results = list(answers)
    if len(results) != len(requests):
        raise RuntimeError(f"the backend answered {len(results)} of {len(requests)} {kind} requests")
    return results


def context_was_cut(result: Any) -> bool | None:
    """Whether the model read less context than the request held; None where a result cannot tell."""
    if isinstance(result, GroupResult):
        parts = [context_was_cut(part) for part in result.parts]
        return True if any(parts) else (None if None in parts else False)
    if isinstance(result, LoglikelihoodResult | RankResult):
        return result.context_tokens_kept < result.context_tokens_original
    if isinstance(result, ReadAlongResult):
        return result.window_start > 0
    cut = getattr(result, "document_tokens_kept", None)
    original = getattr(result, "document_tokens_original", None)
    if isinstance(cut, int) and isinstance(original, int):
        return cut < original
    return None


def tokens_of(result: Any) -> int:
    """Model tokens a result took (for tokens/s): context kept plus what was scored or generated."""
    if isinstance(result, GroupResult):
        return sum(tokens_of(part) for part in result.parts)
    if isinstance(result, LoglikelihoodResult):
        return result.context_tokens_kept + sum(score.n_tokens for score in result.scores)
    if isinstance(result, RankResult):
        return result.context_tokens_kept + sum(result.candidate_tokens)
    if isinstance(result, GenerateResult):
        return result.n_prompt_tokens + result.n_generated_tokens
    if isinstance(result, RollingResult):
        return result.n_tokens
    if isinstance(result, ReadAlongResult):
        return result.processed_tokens  # what this question cost, reading on included
    return 0


def scored_tokens(result: Any) -> int:
    """The most tokens any one value of a result sums over (a candidate's, an option's log-prob): what a
    summed log-prob's tolerance scales with. Results without a per-value count give all their tokens."""
    if isinstance(result, GroupResult):
        return max((scored_tokens(part) for part in result.parts), default=0)
    if isinstance(result, LoglikelihoodResult | ReadAlongResult):
        return max((score.n_tokens for score in result.scores), default=0)
    if isinstance(result, RankResult):
        return max(result.candidate_tokens, default=0)
    return tokens_of(result)
