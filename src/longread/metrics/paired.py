"""Two systems on the same items: the difference of their scores, its paired bootstrap interval, McNemar.

Scores come in pairs (item i: ``a[i]`` and ``b[i]``). The difference is ``mean(b) - mean(a)``; its
interval resamples *items* (both scores of an item together), so what the two systems share (an easy
book, a hard question) cancels. Where items name their cluster (``clusters``: the book each instance
comes from) the interval is a **cluster bootstrap**: clusters are drawn with replacement, each with all
its items, since the instances of one book are not independent; with fewer than two clusters it falls
back to items and says so (``resampled``). For yes/no scores McNemar's exact test asks whether the items
only ``a`` got right and those only ``b`` got right could be a fair coin's split: two-sided, from the
binomial distribution by hand (``math.comb``; scipy is not a dependency); it is per item whatever the
clusters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

IndexArray = npt.NDArray[np.int64]

PAIRED_RESAMPLES = 2000


@dataclass(frozen=True)
class PairedScores:
    n: int
    mean_a: float
    mean_b: float
    difference: float
    """mean(b) - mean(a)."""
    ci_low: float
    ci_high: float
    only_a: int | None = None
    """Yes/no scores: items ``a`` got right and ``b`` wrong."""
    only_b: int | None = None
    mcnemar_p: float | None = None
    resampled: str = "instances"
    """What the interval resampled: ``books`` (clusters, each with all its items) or ``instances``."""
    clusters: int | None = None
    """Distinct clusters (books) among the items, where they were given."""


Clusters = Sequence[str] | None


def resample_plan(n: int, clusters: Clusters) -> list[IndexArray] | None:
    """The members of each cluster (in first-seen order), or None to resample items one by one."""
    if clusters is None:
        return None
    if len(clusters) != n:
        raise ValueError(f"clusters must name every item: {len(clusters)} names for {n} items")
    members: dict[str, list[int]] = {}
    for index, cluster in enumerate(clusters):
        members.setdefault(str(cluster), []).append(index)
    if len(members) < 2:
        return None
    return [np.asarray(indices, dtype=np.int64) for indices in members.values()]


def draw(rng: np.random.Generator, n: int, plan: list[IndexArray] | None) -> IndexArray:
    """One resample's item indices: n items drawn with replacement, or as many clusters as there are,
    each with all its items."""
    if plan is None:
        return rng.integers(0, n, size=n)
    picks = rng.integers(0, len(plan), size=len(plan))
    return np.concatenate([plan[i] for i in picks])


def mcnemar_exact_p(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: P(a split at least this uneven | the discordant items are a fair
    coin's), ``min(1, 2 · P(X ≤ min(only_a, only_b)))`` with X ~ Binomial(only_a + only_b, 1/2); 1.0 when
    no item is discordant."""
    if only_a < 0 or only_b < 0:
        raise ValueError(f"counts must be >= 0, got {only_a} and {only_b}")
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1))
    return min(1.0, float(2 * tail / 2**n))


def paired_scores(
    a: Sequence[float | bool],
    b: Sequence[float | bool],
    *,
    seed: int = 0,
    n_resamples: int = PAIRED_RESAMPLES,
    clusters: Clusters = None,
) -> PairedScores:
    """Compare paired scores; yes/no scores (bools) also get McNemar's exact test. ``clusters``: each
    item's book (a cluster bootstrap, see the module docstring)."""
    if len(a) != len(b):
        raise ValueError(f"paired scores need equal lengths, got {len(a)} and {len(b)}")
    first = np.asarray(a, dtype=np.float64)
    second = np.asarray(b, dtype=np.float64)
    if first.size == 0:
        return PairedScores(0, math.nan, math.nan, math.nan, math.nan, math.nan)
    plan = resample_plan(int(first.size), clusters)
    differences = second - first
    rng = np.random.default_rng(seed)
    estimates = [float(differences[draw(rng, differences.size, plan)].mean()) for _ in range(n_resamples)]
    low, high = (float(v) for v in np.percentile(estimates, [2.5, 97.5]))
    scores = PairedScores(
        n=int(first.size),
        mean_a=float(first.mean()),
        mean_b=float(second.mean()),
        difference=float(second.mean() - first.mean()),
        ci_low=low,
        ci_high=high,
        resampled="instances" if plan is None else "books",
        clusters=None if clusters is None else len(set(clusters)),
    )
    if all(isinstance(value, bool) for value in [*a, *b]):
        only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
        only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
        return replace(scores, only_a=only_a, only_b=only_b, mcnemar_p=mcnemar_exact_p(only_a, only_b))
    return scores


def paired_corpus_scores(
    a: Sequence[object],
    b: Sequence[object],
    corpus_value: Callable[[Sequence[object]], float | None],
    *,
    seed: int = 0,
    n_resamples: int = PAIRED_RESAMPLES,
    clusters: Clusters = None,
) -> PairedScores:
    """Compare a corpus-level metric (BLEU, macro F1) of two systems on the same items.

    ``a[i]`` and ``b[i]`` are item i's rows; the metric is computed over all rows of each system, and its
    interval resamples *items* (both rows of an item together) and computes the metric again on each
    resample: the difference of the two corpus values, not a mean of per-item differences. A resample
    on which the metric has no value (``None``) is left out of the percentiles.
    """
    if len(a) != len(b):
        raise ValueError(f"paired rows need equal lengths, got {len(a)} and {len(b)}")
    if not a:
        return PairedScores(0, math.nan, math.nan, math.nan, math.nan, math.nan)
    value_a, value_b = _corpus(corpus_value, a), _corpus(corpus_value, b)
    rng = np.random.default_rng(seed)
    plan = resample_plan(len(a), clusters)
    estimates = []
    for _ in range(n_resamples):
        chosen = draw(rng, len(a), plan)
        first = _corpus(corpus_value, [a[i] for i in chosen])
        second = _corpus(corpus_value, [b[i] for i in chosen])
        if math.isfinite(first) and math.isfinite(second):
            estimates.append(second - first)
    low, high = np.percentile(estimates, [2.5, 97.5]) if estimates else (math.nan, math.nan)
    return PairedScores(
        len(a), value_a, value_b, value_b - value_a, float(low), float(high),
        resampled="instances" if plan is None else "books",
        clusters=None if clusters is None else len(set(clusters)),
    )  # fmt: skip


def _corpus(corpus_value: Callable[[Sequence[object]], float | None], rows: Sequence[object]) -> float:
    value = corpus_value(rows)
    return math.nan if value is None else float(value)
