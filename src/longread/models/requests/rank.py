"""Ranking requests: candidates scored for one context by a model that is not a token-level LM (SuffixLM).

Scores are higher-is-better, not log-probabilities; token limits count in the
ranker's own tokenizer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from longread.models.requests.schema import SCHEMA_VERSION, _positive_or_none


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
