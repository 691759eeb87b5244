"""What a paired difference lets one claim: an effect, a null with the size it rules out, or neither.

The rule (:data:`CLAIM_RULE`), the same in every report that makes a sentence of a difference:

- fewer than :data:`MIN_PAIRED` paired instances, or no interval: ``too few`` — nothing is claimed;
- right/wrong metrics (McNemar's exact p is known): an **effect** only when the 95% interval excludes 0
  *and* p < :data:`ALPHA`; a **null** when the interval holds 0 and p ≥ :data:`ALPHA`; otherwise the two
  disagree and the difference is **not established** (both numbers are given);
- other metrics (no p): an effect when the interval excludes 0, else a null.

A null states the size it rules out: the largest difference its interval still allows,
``max(|low|, |high|)`` ("changes accuracy by no more than ±0.09"). Where no pair disagrees (a right/wrong
interval of exactly [0, 0]) the bootstrap cannot say how rare disagreement is, so the bound is the exact
one-sided 95% upper bound on the share of pairs that disagree, ``1 − 0.05^(1/n)`` (about 3/n, the rule of
three): 20 paired instances without a change rule out only changes beyond ±0.14.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

ALPHA = 0.05
"""McNemar's p below which a right/wrong difference may be called an effect."""
MIN_PAIRED = 5
"""Paired instances below which nothing is claimed."""
CLAIM_RULE = (
    f"an effect is claimed when the 95% interval excludes 0 and, for right/wrong metrics, McNemar's exact "
    f"p < {ALPHA}; a difference that passes only one of them is 'not established'; a null states the "
    f"largest difference its interval allows (where no pair differs, 1 − 0.05^(1/n), about 3/n); fewer "
    f"than {MIN_PAIRED} paired instances claim nothing"
)

ClaimKind = Literal["effect", "not established", "null", "too few"]


@dataclass(frozen=True)
class Claim:
    kind: ClaimKind
    bound: float | None = None
    """A null: the largest |difference| its interval allows (the size it rules out beyond)."""


def claim(low: float, high: float, p: float | None, paired: int) -> Claim:
    """What the interval [low, high] of a paired difference, its McNemar p (None: not a right/wrong
    metric) and its count of paired instances allow one to say (see the module docstring)."""
    if paired < MIN_PAIRED or not (math.isfinite(low) and math.isfinite(high)):
        return Claim("too few")
    excludes_zero = low > 0 or high < 0
    if p is None:
        return Claim("effect") if excludes_zero else Claim("null", max(abs(low), abs(high)))
    significant = p < ALPHA
    if excludes_zero and significant:
        return Claim("effect")
    if not excludes_zero and not significant:
        return Claim("null", max(abs(low), abs(high), no_change_bound(paired) if low == high == 0 else 0.0))
    return Claim("not established")


def no_change_bound(paired: int) -> float:
    """The exact one-sided 95% upper bound on the share of ``paired`` pairs that disagree when none did
    (``1 − 0.05^(1/n)``, about 3/n): the largest difference such a null rules out."""
    return float(1 - 0.05 ** (1 / paired))


def p_text(p: float | None) -> str:
    """McNemar's p as a sentence gives it: ``p < 0.001`` or ``p = 0.125``."""
    if p is None:
        return ""
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"
