"""The search for the used context at one prefix length: which K (tokens kept intact at the prefix's
end, everything before them under the control) to run next.

Descend the log grid of :func:`longread.horizon.plan.keep_grid` while each K's answers are a null
against the intact run's (by the claim rule of :mod:`longread.metrics.claims`, before the page's
adjustment — an adjustment only raises p, so it never turns a null into a non-null); at the first K that
is not (use shown, or not ruled out) bisect between it and the last null K, ``refine`` times, on
multiples of ``step``. K = L is the intact run itself, so a first grid K that is not a null is bisected
against L. Each K is measured once (the caller runs it or finds its finished run).

With ``zero_first`` K = 0 (everything replaced) is measured before the grid: a null there is the answer
(the smallest K there is) and nothing else runs; otherwise the descent goes on as above, reusing that
run when it reaches 0. It saves the grid's runs where a model uses nothing before its last tokens and
costs one run where it uses something above the grid's last K; its error rates are measured apart
(bench/horizon_rule.py ``--search zero-first``).
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


SEARCHES = ("descend", "zero-first")
"""How the search orders its K: down the grid, or K = 0 first (module docstring)."""


def search_keep(
    measure: Callable[[int], PairedScores],
    length: int,
    grid: Sequence[int],
    refine: int,
    step: int,
    zero_first: bool = False,
) -> list[Step]:
    """Every K tried, largest first (see the module docstring)."""
    tried: dict[int, Step] = {}

    def at(keep: int) -> Step:
        if keep not in tried:
            tried[keep] = Step(keep, measure(keep))
        return tried[keep]

    if zero_first and 0 not in grid:
        raise ValueError(f"a search that tries K = 0 first needs 0 on its grid; got {list(grid)}")
    if zero_first and at(0).null:
        return [tried[0]]

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
