"""Simulated paired runs of known truth, to measure how often an interval holds it.

One **cell** is a design (books, instances per book), a base rate, a true difference and whether the
effect differs from book to book; one **replicate** is a whole simulated run of that design: per book a
difficulty (``logit p_g = logit(base) + N(0, 0.5²)``) and an effect (``δ_g = δ + N(0, 0.1²)`` with
heterogeneity, else ``δ``), per instance the intact answer ``a ~ Bernoulli(p_g)`` and the controlled
``b ~ Bernoulli(clip(p_g + δ_g))``, the same uniform draw deciding both in 60% of instances (answers
that move together) and an independent one otherwise. The truth is the mean over books of
``clip(p_g + δ_g) − p_g``, computed from 200,000 books. A drop is drawn where the base rate is at least
0.5, a rise below. Continuous paired values (margins, log-probs) and corpus-level ratios (BLEU's shape:
summed hits over summed lengths) are simulated alike (:func:`continuous_replicates`,
:func:`ratio_replicates`).

Each method is computed for every replicate at once (the same primitives the reports call:
:func:`~longread.metrics.cluster_t.cr2_variances`, :func:`~longread.metrics.tango.tango_intervals`), and
``bench/interval_coverage.py`` checks them against :func:`longread.metrics.paired.paired_scores` itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import expit, logit

from longread.metrics.cluster_t import bell_mccaffrey_df, book_share_intervals, cr2_variances, t_intervals
from longread.metrics.tango import tango_intervals

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

DIFFICULTY_SD = 0.5
EFFECT_SD = 0.1
TOGETHER = 0.6
TRUTH_BOOKS = 200_000
BOOTSTRAP_RESAMPLES = 2000


@dataclass(frozen=True)
class Design:
    books: int
    sizes: tuple[int, ...]
    """Instances in each book."""

    @property
    def n(self) -> int:
        return sum(self.sizes)

    @property
    def codes(self) -> IntArray:
        return np.repeat(np.arange(self.books, dtype=np.int64), self.sizes)


def design(books: int, per_book: int | str) -> Design:
    """``per_book`` instances in every book, or ``"unequal"``: sizes spread geometrically from 1 to 50."""
    if per_book == "unequal":
        sizes = np.rint(np.geomspace(1, 50, books)).astype(int) if books > 1 else np.asarray([12])
        return Design(books, tuple(int(s) for s in sizes))
    return Design(books, (int(per_book),) * books)


def _book_rates(rng: np.random.Generator, shape: tuple[int, ...], base: float, delta: float,
                heterogeneous: bool) -> tuple[FloatArray, FloatArray]:  # fmt: skip
    p = expit(logit(base) + DIFFICULTY_SD * rng.standard_normal(shape))
    effect = delta + (EFFECT_SD * rng.standard_normal(shape) if heterogeneous else 0.0)
    return p, np.clip(p + effect, 0.0, 1.0)


def signed(base: float, size: float) -> float:
    """The true difference's sign: a drop where the base rate is at least 0.5, else a rise."""
    return -size if base >= 0.5 else size


def binary_truth(base: float, delta: float, heterogeneous: bool, seed: int = 12345) -> float:
    p, q = _book_rates(np.random.default_rng(seed), (TRUTH_BOOKS,), base, delta, heterogeneous)
    return float(np.mean(q - p))


def binary_replicates(rng: np.random.Generator, cell: Design, replicates: int, base: float, delta: float,
                      heterogeneous: bool) -> tuple[BoolArray, BoolArray]:  # fmt: skip
    """Intact and controlled answers, replicates × instances (books in ``cell.codes`` order)."""
    p, q = _book_rates(rng, (replicates, cell.books), base, delta, heterogeneous)
    p_i, q_i = p[:, cell.codes], q[:, cell.codes]
    shared = rng.random((replicates, cell.n))
    other = rng.random((replicates, cell.n))
    together = rng.random((replicates, cell.n)) < TOGETHER
    return shared < p_i, np.where(together, shared, other) < q_i


def continuous_replicates(rng: np.random.Generator, cell: Design, replicates: int, delta: float,
                          heterogeneous: bool, skewed: bool) -> FloatArray:  # fmt: skip
    """Paired differences (controlled − intact), replicates × instances; noise of sd 1 (normal, or a
    centred exponential where ``skewed``), book effects ``δ + N(0, 0.3²)`` with heterogeneity."""
    effect = delta + (0.3 * rng.standard_normal((replicates, cell.books)) if heterogeneous else 0.0)
    noise = (
        rng.exponential(1.0, (replicates, cell.n)) - 1.0
        if skewed
        else rng.standard_normal((replicates, cell.n))
    )
    return np.broadcast_to(effect, (replicates, cell.books))[:, cell.codes] + noise


def ratio_replicates(rng: np.random.Generator, cell: Design, replicates: int, base: float, delta: float,
                     heterogeneous: bool) -> tuple[FloatArray, FloatArray, FloatArray]:  # fmt: skip
    """Per instance: a length (10 + Poisson(20)), hits under a and under b (binomial at the book's rates
    moved by an instance's own difficulty, N(0, 0.5²) on the logit scale): replicates × instances."""
    p, q = _book_rates(rng, (replicates, cell.books), base, delta, heterogeneous)
    own = 0.5 * rng.standard_normal((replicates, cell.n))
    p_i = expit(logit(np.clip(p[:, cell.codes], 1e-9, 1 - 1e-9)) + own)
    q_i = np.clip(p_i + (q - p)[:, cell.codes], 0.0, 1.0)
    lengths = 10.0 + rng.poisson(20.0, (replicates, cell.n)).astype(np.float64)
    hits_a = rng.binomial(lengths.astype(np.int64), p_i).astype(np.float64)
    hits_b = rng.binomial(lengths.astype(np.int64), q_i).astype(np.float64)
    return lengths, hits_a, hits_b


def ratio_truth(base: float, delta: float, heterogeneous: bool, seed: int = 12345) -> float:
    rng = np.random.default_rng(seed)
    p, q = _book_rates(rng, (TRUTH_BOOKS,), base, delta, heterogeneous)
    p_i = expit(logit(np.clip(p, 1e-9, 1 - 1e-9)) + 0.5 * rng.standard_normal(TRUTH_BOOKS))
    return float(np.mean(np.clip(p_i + (q - p), 0.0, 1.0) - p_i))


def wilson_intervals(
    successes: FloatArray, n: int, z: float = 1.959963984540054
) -> tuple[FloatArray, FloatArray]:
    p = successes / n
    z2_n = z * z / n
    centre = (p + z2_n / 2) / (1 + z2_n)
    half = z / (1 + z2_n) * np.sqrt(p * (1 - p) / n + z2_n / (4 * n))
    low = np.where(successes == 0, 0.0, np.maximum(0.0, centre - half))
    high = np.where(successes == n, 1.0, np.minimum(1.0, centre + half))
    return low, high


# -- the methods, every replicate at once ------------------------------------------------------------


@dataclass(frozen=True)
class Intervals:
    low: FloatArray
    high: FloatArray
    p: FloatArray | None = None


def cluster_share(right: BoolArray, cell: Design) -> Intervals:
    """A share over books: the hull of the exact binomial interval and the logit-scale CR2 interval."""
    low, high = book_share_intervals(right.astype(float), cell.codes, cell.books)
    return Intervals(low, high)


def cr2(values: FloatArray, cell: Design) -> Intervals:
    means, variances = cr2_variances(values, cell.codes, cell.books)
    low, high, p = t_intervals(means, variances, bell_mccaffrey_df(cell.sizes))
    return Intervals(low, high, p)


def percentile_bootstrap(values: FloatArray, cell: Design, seed: int = 0) -> Intervals:
    """longread's interval before: books drawn with replacement, each with all its instances; the 2.5th
    and 97.5th percentiles of the resampled means (the same draws for every replicate)."""
    draws = np.random.default_rng(seed).integers(0, cell.books, (BOOTSTRAP_RESAMPLES, cell.books))
    counts = np.zeros((BOOTSTRAP_RESAMPLES, cell.books))
    np.add.at(counts, (np.arange(BOOTSTRAP_RESAMPLES)[:, None], draws), 1.0)
    onehot = np.zeros((cell.n, cell.books))
    onehot[np.arange(cell.n), cell.codes] = 1.0
    sums = values @ onehot
    means = (sums @ counts.T) / (counts @ np.asarray(cell.sizes, dtype=float))
    low, high = np.percentile(means, [2.5, 97.5], axis=1)
    return Intervals(low, high)


def tango(a: BoolArray, b: BoolArray) -> Intervals:
    only_a = np.sum(a & ~b, axis=1)
    only_b = np.sum(b & ~a, axis=1)
    low, high = tango_intervals(only_a, only_b, a.shape[1])
    return Intervals(low, high, _mcnemar_p(only_a, only_b))


def _mcnemar_p(only_a: IntArray, only_b: IntArray) -> FloatArray:
    from scipy.stats import binom

    total = only_a + only_b
    tail = binom.cdf(np.minimum(only_a, only_b), np.maximum(total, 1), 0.5)
    return np.where(total == 0, 1.0, np.minimum(1.0, 2 * tail))


def hull(first: Intervals, second: Intervals) -> Intervals:
    p = None if first.p is None or second.p is None else np.maximum(first.p, second.p)
    return Intervals(np.minimum(first.low, second.low), np.maximum(first.high, second.high), p)


def ratio_jackknife(lengths: FloatArray, hits_a: FloatArray, hits_b: FloatArray, cell: Design) -> Intervals:
    """The delete-one-book jackknife of Σ(hits_b − hits_a)/Σ lengths, with t and BM df."""
    onehot = np.zeros((cell.n, cell.books))
    onehot[np.arange(cell.n), cell.codes] = 1.0
    gained, read = (hits_b - hits_a) @ onehot, lengths @ onehot
    total_gained, total_read = gained.sum(axis=1), read.sum(axis=1)
    estimate = total_gained / total_read
    leave = (total_gained[:, None] - gained) / (total_read[:, None] - read)
    g = cell.books
    variance = (g - 1) / g * np.sum((leave - leave.mean(axis=1, keepdims=True)) ** 2, axis=1)
    low, high, p = t_intervals(estimate, variance, min(g - 1.0, bell_mccaffrey_df(cell.sizes)))
    return Intervals(low, high, p)


def ratio_percentile_bootstrap(lengths: FloatArray, hits_a: FloatArray, hits_b: FloatArray, cell: Design,
                               seed: int = 0) -> Intervals:  # fmt: skip
    draws = np.random.default_rng(seed).integers(0, cell.books, (BOOTSTRAP_RESAMPLES, cell.books))
    counts = np.zeros((BOOTSTRAP_RESAMPLES, cell.books))
    np.add.at(counts, (np.arange(BOOTSTRAP_RESAMPLES)[:, None], draws), 1.0)
    onehot = np.zeros((cell.n, cell.books))
    onehot[np.arange(cell.n), cell.codes] = 1.0
    gained, read = (hits_b - hits_a) @ onehot, lengths @ onehot
    low, high = np.percentile((gained @ counts.T) / (read @ counts.T), [2.5, 97.5], axis=1)
    return Intervals(low, high)


def covers(intervals: Intervals, truth: float) -> BoolArray:
    return (intervals.low <= truth + 1e-12) & (truth - 1e-12 <= intervals.high)
