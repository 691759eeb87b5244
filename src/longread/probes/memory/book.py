"""One book's memory scores and verdict (what ``books.json`` holds per book)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class BookMemory:
    book: str
    title: str
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)
    """score name → {value, ci_low, ci_high, n}."""
    remembered: bool | str | None = None
    """True, False or "cannot tell" (:mod:`longread.probes.memory.rule`); None before scoring."""
    clauses: list[dict[str, Any]] = field(default_factory=list)
    """How each clause of the rule stands (score, threshold, status, value, upper bound, items needed)."""
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
