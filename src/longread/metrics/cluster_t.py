"""A mean's interval when items come in clusters (the instances of one book): CR2 with Bell–McCaffrey
degrees of freedom, and the delete-one-cluster jackknife for statistics that are not means.

**CR2** (Bell & McCaffrey 2002; Imbens & Kolesár 2016 recommend it for few clusters): the mean ``m`` of
``n`` values in ``G`` clusters, residuals ``e = x − m``, cluster sums ``S_g`` of the residuals and sizes
``n_g``; the variance of ``m`` is ``Σ_g S_g² / (1 − n_g/n) / n²`` (the intercept-only model's
leverage correction, exactly unbiased when values are independent with one variance), and the interval
is ``m ± t(ν) · √V`` with Bell & McCaffrey's degrees of freedom ``ν = (tr M)² / tr(M²)``, ``M`` the
G × G matrix ``a_g a_h (δ_gh n_g − n_g n_h / n) / n²`` with ``a_g = (1 − n_g/n)^(−1/2)``: ``G − 1`` for
equal clusters, fewer where a few clusters hold most items. With one item a cluster it is the ordinary
one-sample t interval (``ν = n − 1``).

**Jackknife** (corpus-level metrics: BLEU, macro F1 — not a mean of per-item values): the statistic
again without each cluster, ``V = (G − 1)/G · Σ (θ_(g) − θ̄)²``, the interval ``θ ± t(ν) · √V`` with the
same ν. Which of these holds its stated 95% at which numbers of books is measured by
``bench/interval_coverage.py`` (docs: statistics).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class TInterval:
    estimate: float
    low: float
    high: float
    p: float
    """Two-sided p of the t test of a true value of 0."""
    df: float
    se: float


def cluster_codes(clusters: Sequence[str]) -> tuple[IntArray, int]:
    """Each item's cluster as 0 … G−1 (first-seen order), and G."""
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(str(c), len(index)) for c in clusters), dtype=np.int64)
    return codes, len(index)


def bell_mccaffrey_df(sizes: Sequence[int] | IntArray) -> float:
    """ν of the CR2 variance of a mean over clusters of these sizes (see the module docstring)."""
    n_g = np.asarray(sizes, dtype=np.float64)
    n = float(n_g.sum())
    if n_g.size < 2:
        return math.nan
    if np.all(n_g == n_g[0]):
        return float(n_g.size - 1)  # equal clusters: M is proportional to I − J/G
    a = (1.0 - n_g / n) ** -0.5
    matrix = np.outer(a, a) * (np.diag(n_g) - np.outer(n_g, n_g) / n) / n**2
    trace = float(np.trace(matrix))
    return trace**2 / float(np.sum(matrix * matrix))


def cr2_variances(values: FloatArray, codes: IntArray, groups: int) -> tuple[FloatArray, FloatArray]:
    """Per row of ``values`` (replicates × items, every row clustered by ``codes``, ``groups`` of them):
    the mean and its CR2 variance."""
    n = values.shape[1]
    means = values.mean(axis=1)
    if groups == n and np.array_equal(codes, np.arange(n)):  # one item a cluster: no sums to form
        residuals = values - means[:, None]
        return means, np.sum(residuals**2, axis=1) / (1.0 - 1.0 / n) / n**2
    onehot = np.zeros((n, groups), dtype=np.float64)
    onehot[np.arange(n), codes] = 1.0
    sums = (values - means[:, None]) @ onehot
    sizes = onehot.sum(axis=0)
    variances = np.sum(sums**2 / (1.0 - sizes / n), axis=1) / n**2
    return means, variances


def t_intervals(
    estimates: FloatArray, variances: FloatArray, df: float, confidence: float = 0.95
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``estimate ± t(df) · √variance`` and the two-sided p of 0, per element; a zero variance gives a
    point (p = 1 at 0, else 0)."""
    se = np.sqrt(np.maximum(variances, 0.0))
    quantile = float(stats.t.ppf(0.5 + confidence / 2, df))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(se > 0, 2 * stats.t.sf(np.abs(estimates) / se, df), np.where(estimates == 0, 1.0, 0.0))
    return estimates - quantile * se, estimates + quantile * se, p


def t_interval(estimate: float, variance: float, df: float, confidence: float = 0.95) -> TInterval:
    """One :func:`t_intervals`."""
    low, high, p = t_intervals(np.asarray([estimate]), np.asarray([variance]), df, confidence)
    return TInterval(estimate, float(low[0]), float(high[0]), float(p[0]), df, math.sqrt(max(variance, 0)))


def cluster_mean_interval(
    values: Sequence[float] | FloatArray, clusters: Sequence[str] | None, confidence: float = 0.95
) -> TInterval:
    """The CR2 interval of the mean of ``values`` (clusters None: every item its own cluster)."""
    data = np.asarray(values, dtype=np.float64)
    if clusters is None:
        codes, groups = np.arange(data.size, dtype=np.int64), int(data.size)
    else:
        codes, groups = cluster_codes(clusters)
    if groups < 2:
        return TInterval(float(data.mean()) if data.size else math.nan, math.nan, math.nan, math.nan,
                         math.nan, math.nan)  # fmt: skip
    means, variances = cr2_variances(data[None, :], codes, groups)
    df = bell_mccaffrey_df(np.bincount(codes, minlength=groups))
    return t_interval(float(means[0]), float(variances[0]), df, confidence)


def logit_share_intervals(
    values: FloatArray, codes: IntArray, groups: int, confidence: float = 0.95
) -> tuple[FloatArray, FloatArray]:
    """Per row of 0/1 ``values`` (replicates × items): the share's CR2 interval drawn on the logit scale
    (``logit(m) ± t(ν) · √V / (m(1 − m))``, back-transformed), so that it bends at 0 and 1 as shares
    of books do; a share of 0 or 1 is taken as half an item from it."""
    n = values.shape[1]
    means, variances = cr2_variances(values, codes, groups)
    quantile = float(
        stats.t.ppf(0.5 + confidence / 2, bell_mccaffrey_df(np.bincount(codes, minlength=groups)))
    )
    share = np.clip(means, 0.5 / n, 1 - 0.5 / n)
    spread = quantile * np.sqrt(np.maximum(variances, 0.0)) / (share * (1 - share))
    centre = np.log(share / (1 - share))
    return 1 / (1 + np.exp(-(centre - spread))), 1 / (1 + np.exp(-(centre + spread)))


def clopper_pearson_intervals(
    successes: FloatArray, n: int, confidence: float = 0.95
) -> tuple[FloatArray, FloatArray]:
    """The exact (Clopper–Pearson) binomial interval of each ``successes / n``: never below its stated
    coverage for independent items, so a share over very few instances keeps its 95%."""
    tail = (1 - confidence) / 2
    low = np.where(successes > 0, stats.beta.ppf(tail, successes, n - successes + 1), 0.0)
    high = np.where(successes < n, stats.beta.ppf(1 - tail, successes + 1, n - successes), 1.0)
    return low, high


def book_share_intervals(values: FloatArray, codes: IntArray, groups: int) -> tuple[FloatArray, FloatArray]:
    """A share over books, per row of 0/1 ``values``: the hull of the exact binomial interval and the
    logit-scale CR2 interval (measured: docs/statistics.md)."""
    exact = clopper_pearson_intervals(values.sum(axis=1), values.shape[1])
    low, high = logit_share_intervals(values, codes, groups)
    return np.minimum(exact[0], low), np.maximum(exact[1], high)


def cluster_share_interval(flags: Sequence[bool], clusters: Sequence[str]) -> tuple[float, float]:
    """One share's book-level interval (see :func:`book_share_intervals`)."""
    codes, groups = cluster_codes(clusters)
    low, high = book_share_intervals(np.asarray(flags, dtype=np.float64)[None, :], codes, groups)
    return float(low[0]), float(high[0])


JACKKNIFE_GROUPS = 100
"""Without clusters, items are jackknifed in at most this many consecutive groups (a statistic such as
BLEU costs one corpus pass per group)."""


def jackknife_interval(
    statistic: Callable[[IntArray], float],
    n: int,
    clusters: Sequence[str] | None,
    confidence: float = 0.95,
) -> TInterval:
    """The delete-one-cluster jackknife interval of ``statistic(indices)`` (the items it is computed
    on); clusters None: items in up to :data:`JACKKNIFE_GROUPS` consecutive groups. A leave-out whose
    statistic is not finite makes the interval NaN."""
    if clusters is None:
        groups = min(n, JACKKNIFE_GROUPS)
        codes = (np.arange(n, dtype=np.int64) * groups) // max(n, 1)
    else:
        codes, groups = cluster_codes(clusters)
    everything = np.arange(n, dtype=np.int64)
    estimate = statistic(everything)
    if groups < 2 or not math.isfinite(estimate):
        return TInterval(estimate, math.nan, math.nan, math.nan, math.nan, math.nan)
    leave_outs = np.asarray([statistic(everything[codes != g]) for g in range(groups)], dtype=np.float64)
    if not np.all(np.isfinite(leave_outs)):
        return TInterval(estimate, math.nan, math.nan, math.nan, math.nan, math.nan)
    variance = float((groups - 1) / groups * np.sum((leave_outs - leave_outs.mean()) ** 2))
    df = min(float(groups - 1), bell_mccaffrey_df(np.bincount(codes, minlength=groups)))
    return t_interval(estimate, variance, df, confidence)
