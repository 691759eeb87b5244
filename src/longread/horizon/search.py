"""The search for the used context at one prefix length: which K (tokens kept intact at the prefix's
end, everything before them under the control) to run next.

Descend the log grid of :func:`longread.horizon.plan.keep_grid` while each K's answers are a null
against the intact run's (by the claim rule of :mod:`longread.metrics.claims`, before the page's
adjustment — an adjustment only raises p, so it never turns a null into a non-null); at the first K that
is not (use shown, or not ruled out) bisect between it and the last null K, ``refine`` times, on
multiples of ``step``. K = L is the intact run itself, so a first grid K that is not a null is bisected
against L. Each K is measured once (the caller runs it or finds its finished run).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from longread.metrics.claims import claim
from longread.metrics.paired import PairedScores


@dataclass(frozen=True)
class Step:
    keep: int
    scores: PairedScores
    """Controlled at K − intact, paired on the campaign's common instances."""

    @property
    def null(self) -> bool:
        return is_null(self.scores)


def is_null(scores: PairedScores) -> bool:
    said = claim(
        scores.ci_low,
        scores.ci_high,
        scores.p,
        scores.n,
        discordant=scores.discordant,
        too_few_books=scores.too_few_books,
    )
    return said.kind == "null"


def search_keep(
    measure: Callable[[int], PairedScores], length: int, grid: Sequence[int], refine: int, step: int
) -> list[Step]:
    """Every K tried, largest first (see the module docstring)."""
    tried: dict[int, Step] = {}

    def at(keep: int) -> Step:
        if keep not in tried:
            tried[keep] = Step(keep, measure(keep))
        return tried[keep]

    kept, lost = length, None
    for keep in grid:
        if at(keep).null:
            kept = keep
        else:
            lost = keep
            break
    for _ in range(refine if lost is not None else 0):
        assert lost is not None
        middle = (kept + lost) // 2 // step * step
        if not lost < middle < kept:
            break
        if at(middle).null:
            kept = middle
        else:
            lost = middle
    return sorted(tried.values(), key=lambda s: s.keep, reverse=True)
