"""What a paired difference lets one claim: an effect, a null with the size it rules out, or neither.

The rule (:data:`CLAIM_RULE`), the same in every report that makes a sentence of a difference:

- fewer than :data:`MIN_PAIRED` paired instances, or no interval: ``too few`` — nothing is claimed;
- instances from 2 to ``MIN_BOOKS − 1`` books: ``too few books`` — no interval speaks for books there
  (measured: docs/statistics.md), so nothing is claimed; the instance-level numbers are still given;
- an **effect** when the 95% interval excludes 0 *and* the family's Holm-adjusted p
  (:func:`holm`) is below :data:`ALPHA`;
- a **null** when the interval holds 0 and the adjusted p is not below :data:`ALPHA`; it states the
  size it rules out, the largest difference its interval allows, ``max(|low|, |high|)``. Where no pair
  differs at all (right/wrong: ``only_a + only_b == 0``, decided from the counts, never from a
  zero-width interval) the bound is at least the exact one-sided 95% bound on the share of pairs that
  disagree, ``1 − 0.05^(1/n)`` (about 3/n, the rule of three);
- otherwise the two disagree and the difference is **not established**.

A report's **family** is the rows it writes a sentence for; their p-values are adjusted together by
Holm's step-down method, and the page says how many were compared. Each p is the one that goes with its
interval (:attr:`longread.metrics.paired.PairedScores.p`). The error rates this rule has — false effects
where nothing differs, nulls whose bound misses a true difference — are measured by
``bench/interval_coverage.py`` (docs: statistics).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

from longread.metrics.paired import MIN_BOOKS

ALPHA = 0.05
"""The adjusted p below which a difference may be called an effect."""
MIN_PAIRED = 5
"""Paired instances below which nothing is claimed."""
CLAIM_RULE = (
    f"an effect is claimed when the 95% interval excludes 0 and the Holm-adjusted p (over the page's "
    f"comparisons) is below {ALPHA}; a difference that passes only one of them is 'not established'; a null "
    f"states the largest difference its interval allows (where no pair differs, at least 1 − 0.05^(1/n), "
    f"about 3/n); the interval speaks for books with {MIN_BOOKS} or more books, and with 2 to "
    f"{MIN_BOOKS - 1} books nothing is claimed; fewer than {MIN_PAIRED} paired instances claim nothing"
)

ClaimKind = Literal["effect", "not established", "null", "too few", "too few books"]


@dataclass(frozen=True)
class Claim:
    kind: ClaimKind
    bound: float | None = None
    """A null: the largest |difference| its interval allows (the size it rules out beyond)."""


def claim(
    low: float,
    high: float,
    p: float | None,
    paired: int,
    *,
    discordant: int | None = None,
    too_few_books: bool = False,
) -> Claim:
    """What the interval [low, high] of a paired difference, its (family-adjusted) p and its count of
    paired instances allow one to say (see the module docstring). ``discordant``: right/wrong metrics'
    pairs that differ (None: not a right/wrong metric); ``too_few_books``: 2 to MIN_BOOKS − 1 books."""
    if paired < MIN_PAIRED or not (math.isfinite(low) and math.isfinite(high)):
        return Claim("too few")
    if too_few_books:
        return Claim("too few books")
    excludes_zero = low > 0 or high < 0
    significant = excludes_zero if p is None else p < ALPHA
    if excludes_zero and significant:
        return Claim("effect")
    if not excludes_zero and not significant:
        bound = max(abs(low), abs(high))
        if discordant == 0:
            bound = max(bound, no_change_bound(paired))
        return Claim("null", bound)
    return Claim("not established")


def no_change_bound(paired: int) -> float:
    """The exact one-sided 95% upper bound on the share of ``paired`` pairs that disagree when none did
    (``1 − 0.05^(1/n)``, about 3/n): the largest difference such a null rules out."""
    return float(1 - 0.05 ** (1 / paired))


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of a family of p-values (None: not in the family, kept None): the
    i-th smallest of m becomes ``max_{j ≤ i} min(1, (m − j + 1) · p_(j))``."""
    present = sorted((p, index) for index, p in enumerate(p_values) if p is not None and math.isfinite(p))
    adjusted: list[float | None] = [None] * len(p_values)
    m, running = len(present), 0.0
    for rank, (p, index) in enumerate(present):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[index] = running
    return adjusted


def family_size(p_values: Sequence[float | None]) -> int:
    """How many comparisons :func:`holm` adjusted together."""
    return sum(1 for p in p_values if p is not None and math.isfinite(p))


@dataclass(frozen=True)
class Plan:
    """What more data would buy: the paired instances (and books, where the interval is by book) that,
    at the spread seen, would give a null bound of ``target`` (a true difference of 0 assumed)."""

    target: float
    instances: int | None
    books: int | None


def plan_for(
    target: float, paired: int, low: float, high: float, books: int | None = None, book_level: bool = False
) -> Plan:
    """The sample that would rule out ±``target``: the bound the interval allows shrinks about as 1/√n, so
    the instances needed are ``n · (bound / target)²`` (at least n + 1 where the bound is not yet
    reached); with a book-level interval the books needed likewise."""
    if target <= 0:
        raise ValueError(f"the target effect must be above 0, got {target}")
    if paired < 1 or not (math.isfinite(low) and math.isfinite(high)):
        return Plan(target, None, None)
    half = max(abs(low), abs(high))  # the bound a null states, not the half-width: it holds the difference
    if half <= 0:
        return Plan(target, paired, books)
    scale = (half / target) ** 2
    instances = max(paired, math.ceil(paired * scale))
    needed_books = max(books, math.ceil(books * scale)) if book_level and books else None
    return Plan(target, instances, needed_books)


def pilot_instances(target: float, discordance: float, confidence: float = 0.95) -> int:
    """Paired right/wrong instances that rule out ±``target`` at a share ``discordance`` of pairs that
    differ (no true difference): ``z² · discordance / target²`` (the normal approximation of McNemar's
    variance), at least the rule of three's ``log(0.05)/log(1 − target)`` where nothing differs."""
    if target <= 0 or not 0 <= discordance <= 1:
        raise ValueError(f"need target > 0 and 0 <= discordance <= 1; got {target}, {discordance}")
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    floor = math.ceil(math.log(1 - confidence) / math.log(1 - target)) if target < 1 else 1
    return max(floor, math.ceil(z * z * discordance / target**2))
