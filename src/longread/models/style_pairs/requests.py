"""What a style-pair backend is asked and what it answers (capability ``pair_scores``).

One request is one document as its paragraphs, in order. The answer holds, for
every adjacent pair (paragraph ``i`` and ``i + 1``), the probability that both
were written by the same author. A document of fewer than two paragraphs has no
pairs: its result is ``same_author == ()`` (never an error), and the caller sees
``n_paragraphs`` to tell why. Turning probabilities into author changes (a change
where ``same_author < threshold``) is the task's work; the backend reports the
threshold it learned (or its untrained default) in every result and in ``describe()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from longread.models.requests import SCHEMA_VERSION

PAIR_SCORES = "pair_scores"
"""The capability (and method name) of a backend that scores adjacent paragraph pairs."""
STYLE_PAIR_CAPABILITIES = frozenset({PAIR_SCORES})


@dataclass(frozen=True, slots=True)
class PairScoreRequest:
    """One document: its paragraphs in order (the PAN layout's lines)."""

    paragraphs: tuple[str, ...]
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)

    def __post_init__(self) -> None:
        # A list passed by mistake would make the request unhashable and mutable.
        object.__setattr__(self, "paragraphs", tuple(self.paragraphs))
        for index, paragraph in enumerate(self.paragraphs):
            if not isinstance(paragraph, str):
                raise TypeError(f"paragraph {index} is {type(paragraph).__name__}, not str")


@dataclass(frozen=True, slots=True)
class PairScoreResult:
    same_author: tuple[float, ...]
    """One probability in [0, 1] per adjacent pair: ``n_paragraphs - 1`` of them (none below 2 paragraphs)."""
    n_paragraphs: int
    n_words: int = 0
    """Whitespace-separated words of the document (the backend's unit of work, for words/s)."""
    threshold: float = 0.5
    """The backend's decision threshold (learned, or its untrained default): a change where P < threshold."""
    schema_version: int = field(default=SCHEMA_VERSION, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "same_author", tuple(float(p) for p in self.same_author))
        expected = max(0, self.n_paragraphs - 1)
        if len(self.same_author) != expected:
            raise ValueError(
                f"{self.n_paragraphs} paragraphs have {expected} adjacent pairs, got {len(self.same_author)}"
            )
