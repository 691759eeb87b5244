"""Tango's score interval for the difference of two paired proportions (Tango 1998, *Statistics in
Medicine* 17:891–908): the instance-level interval of a right/wrong paired difference.

Of ``n`` pairs, ``only_a`` were right only under ``a`` and ``only_b`` only under ``b``; the difference
is ``Δ = (only_b − only_a) / n``. The score statistic for a true difference Δ is

    Z(Δ) = (only_b − only_a − nΔ) / √(n · (2 p̃ + Δ(1 − Δ)))

with ``p̃`` the maximum-likelihood share of "right only under a" pairs given Δ, the larger root of
``2n p² − B p − only_a · Δ(1 − Δ) = 0``, ``B = only_a (1 − Δ) + only_b (1 + Δ) − 2nΔ``. The interval
is every Δ with ``|Z(Δ)| ≤ z``, found by bisection (Z falls as Δ grows). Unlike a bootstrap it is not
[0, 0] when no pair differs: with none of 20 pairs discordant it is ±z²/(n + z²) = ±0.16. At Δ = 0 the
statistic is McNemar's (asymptotic) ``(only_b − only_a)/√(only_a + only_b)``.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
_STEPS = 60
_EDGE = 1e-12


def tango_statistic(only_a: FloatArray, only_b: FloatArray, n: FloatArray, delta: FloatArray) -> FloatArray:
    """Z(Δ) for arrays of counts and differences (see the module docstring)."""
    spread = delta * (1.0 - delta)
    slope = only_a * (1.0 - delta) + only_b * (1.0 + delta) - 2.0 * n * delta
    root = np.sqrt(np.maximum(slope**2 + 8.0 * n * only_a * spread, 0.0))
    p_tilde = (slope + root) / (4.0 * n)
    variance = n * (2.0 * p_tilde + spread)
    numerator = only_b - only_a - n * delta
    with np.errstate(divide="ignore", invalid="ignore"):
        z = numerator / np.sqrt(variance)
    return np.where(variance > 0, z, np.where(numerator == 0, 0.0, np.sign(numerator) * np.inf))


def tango_intervals(
    only_a: npt.ArrayLike, only_b: npt.ArrayLike, n: npt.ArrayLike, confidence: float = 0.95
) -> tuple[FloatArray, FloatArray]:
    """Tango's interval of ``(only_b − only_a)/n`` for each set of counts (arrays broadcast)."""
    a, b, total = (np.asarray(v, dtype=np.float64) for v in (only_a, only_b, n))
    a, b, total = np.broadcast_arrays(a, b, total)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    observed = (b - a) / total

    def solve(lo: FloatArray, hi: FloatArray, target: float) -> FloatArray:
        # Z falls as Δ grows: find Δ in [lo, hi] with Z(Δ) = target
        for _ in range(_STEPS):
            mid = (lo + hi) / 2
            above = tango_statistic(a, b, total, mid) > target
            lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
        return (lo + hi) / 2

    low_edge = np.full_like(observed, -1.0 + _EDGE)
    high_edge = np.full_like(observed, 1.0 - _EDGE)
    low = np.where(tango_statistic(a, b, total, low_edge) <= z, -1.0, solve(low_edge, observed.copy(), z))
    high = np.where(tango_statistic(a, b, total, high_edge) >= -z, 1.0, solve(observed.copy(), high_edge, -z))
    return np.minimum(low, observed), np.maximum(high, observed)


def tango_interval(only_a: int, only_b: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Tango's interval of one paired difference ``(only_b − only_a)/n``."""
    if n <= 0:
        raise ValueError(f"need at least one pair, got n = {n}")
    if only_a < 0 or only_b < 0 or only_a + only_b > n:
        raise ValueError(f"need 0 <= only_a + only_b <= n; got {only_a}, {only_b} of {n}")
    low, high = tango_intervals(only_a, only_b, n, confidence)
    return float(low), float(high)
