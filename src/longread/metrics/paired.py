"""Two systems on the same items: the difference of their scores, its 95% interval, its test.

Scores come in pairs (item i: ``a[i]`` and ``b[i]``); the difference is ``mean(b) − mean(a)``. Where
items name their cluster (``clusters``: the book each instance comes from) the interval speaks for books,
not only for these instances — and a book-level interval needs books: the rule below was chosen by the
coverage simulation of ``bench/interval_coverage.py`` (docs: statistics), which measured the percentile
cluster bootstrap used before at 82–87% for a stated 95% with 5 books.

- **Right/wrong scores** (bools): with at least :data:`MIN_BOOKS` books, the hull of the CR2 cluster
  interval (:mod:`longread.metrics.cluster_t`) and Tango's instance-level score interval
  (:mod:`longread.metrics.tango`), and ``p`` the larger of the clustered t test's and McNemar's exact
  p; otherwise Tango's interval and McNemar's exact p, on the instances. The interval is cut to
  [−1, 1], where a difference of two shares lies (a t interval with few books can reach past it).
- **Continuous scores** (margins, log-probs): the CR2 interval and t test by book with at least
  :data:`MIN_BOOKS` books, else by instance (the one-sample t interval).
- **Corpus-level metrics** (BLEU, macro F1): the delete-one-book jackknife with t, by book with at least
  :data:`MIN_BOOKS` books, else by instance.

With 2 to :data:`MIN_BOOKS` − 1 books the book-level interval is not given at all: ``too_few_books``
is set, the interval is the instance-level one (it speaks for these instances only) and the claim rule
(:mod:`longread.metrics.claims`) claims nothing from it. McNemar's exact test asks whether the items only
``a`` got right and those only ``b`` got right could be a fair coin's split: two-sided, per item.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from longread.metrics.cluster_t import TInterval, cluster_mean_interval, jackknife_interval
from longread.metrics.tango import tango_interval

IndexArray = npt.NDArray[np.int64]

MIN_BOOKS = 5
"""Books below which no interval speaks for books (measured: docs/statistics.md)."""


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
    level: str = "instances"
    """What the interval speaks for: ``books`` (a cluster interval, books as the unit) or ``instances``."""
    clusters: int | None = None
    """Distinct clusters (books) among the items, where they were given."""
    p: float | None = None
    """The two-sided p of no difference that goes with the interval (what a family's adjustment takes)."""
    method: str = ""
    """How the interval and p were computed, as a page says it."""
    too_few_books: bool = False
    """2 to MIN_BOOKS − 1 books: the interval is instance-level and nothing is claimed at the book level."""

    @property
    def discordant(self) -> int | None:
        """Yes/no scores: the pairs whose outcomes differ."""
        return None if self.only_a is None or self.only_b is None else self.only_a + self.only_b


Clusters = Sequence[str] | None


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


def _books(n: int, clusters: Clusters) -> int | None:
    if clusters is None:
        return None
    if len(clusters) != n:
        raise ValueError(f"clusters must name every item: {len(clusters)} names for {n} items")
    return len({str(c) for c in clusters})


def book_level(books: int | None) -> bool:
    """Does an interval over items of ``books`` books speak for books?"""
    return books is not None and books >= MIN_BOOKS


def _too_few(books: int | None) -> bool:
    return books is not None and 2 <= books < MIN_BOOKS


def _empty() -> PairedScores:
    return PairedScores(0, math.nan, math.nan, math.nan, math.nan, math.nan)


def paired_scores(
    a: Sequence[float | bool],
    b: Sequence[float | bool],
    *,
    clusters: Clusters = None,
    confidence: float = 0.95,
) -> PairedScores:
    """Compare paired scores (see the module docstring); yes/no scores (bools) also get McNemar's exact
    test. ``clusters``: each item's book; ``confidence``: the interval's (above 0.95 for an interval
    simultaneous over several, Bonferroni's; p does not change)."""
    if len(a) != len(b):
        raise ValueError(f"paired scores need equal lengths, got {len(a)} and {len(b)}")
    first = np.asarray(a, dtype=np.float64)
    second = np.asarray(b, dtype=np.float64)
    if first.size == 0:
        return _empty()
    books = _books(int(first.size), clusters)
    by_book = book_level(books)
    differences = second - first
    base = PairedScores(
        n=int(first.size),
        mean_a=float(first.mean()),
        mean_b=float(second.mean()),
        difference=float(second.mean() - first.mean()),
        ci_low=math.nan,
        ci_high=math.nan,
        clusters=books,
        level="books" if by_book else "instances",
        too_few_books=_too_few(books),
    )
    if all(isinstance(value, bool) for value in [*a, *b]):
        only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
        only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
        mcnemar = mcnemar_exact_p(only_a, only_b)
        low, high = tango_interval(only_a, only_b, int(first.size), confidence)
        p, method = mcnemar, "Tango's score interval by instance; McNemar's exact p"
        if by_book:
            cluster = cluster_mean_interval(differences, clusters, confidence)
            low, high = min(low, cluster.low), max(high, cluster.high)
            p = max(mcnemar, cluster.p)
            method = (
                f"the hull of CR2 by book (t, {cluster.df:.1f} df) and Tango's score interval; p: the larger "
                "of the clustered t test's and McNemar's exact"
            )
        low, high = max(low, -1.0), min(high, 1.0)  # a difference of two shares lies in [-1, 1]
        return replace(base, ci_low=low, ci_high=high, only_a=only_a, only_b=only_b, mcnemar_p=mcnemar,
                       p=p, method=method)  # fmt: skip
    interval = cluster_mean_interval(differences, clusters if by_book else None, confidence)
    return replace(base, ci_low=interval.low, ci_high=interval.high, p=interval.p,
                   method=_t_method("CR2", interval, by_book))  # fmt: skip


def _t_method(kind: str, interval: TInterval, by_book: bool) -> str:
    unit = "by book" if by_book else "by instance"
    return f"{kind} {unit} (t, {interval.df:.1f} df)"


def paired_corpus_scores(
    a: Sequence[object],
    b: Sequence[object],
    corpus_value: Callable[[Sequence[object]], float | None],
    *,
    clusters: Clusters = None,
) -> PairedScores:
    """Compare a corpus-level metric (BLEU, macro F1) of two systems on the same items.

    ``a[i]`` and ``b[i]`` are item i's rows; the metric is computed over all rows of each system, and its
    interval is the delete-one-book jackknife of the difference of the two corpus values (by instance
    groups below :data:`MIN_BOOKS` books), not a mean of per-item differences.
    """
    if len(a) != len(b):
        raise ValueError(f"paired rows need equal lengths, got {len(a)} and {len(b)}")
    if not a:
        return _empty()
    books = _books(len(a), clusters)
    by_book = book_level(books)

    def difference(indices: IndexArray) -> float:
        chosen = [int(i) for i in indices]
        first = _corpus(corpus_value, [a[i] for i in chosen])
        second = _corpus(corpus_value, [b[i] for i in chosen])
        return second - first

    interval = jackknife_interval(difference, len(a), clusters if by_book else None)
    value_a, value_b = _corpus(corpus_value, a), _corpus(corpus_value, b)
    return PairedScores(
        len(a), value_a, value_b, value_b - value_a, interval.low, interval.high,
        level="books" if by_book else "instances", clusters=books, p=interval.p,
        method=_t_method("jackknife", interval, by_book), too_few_books=_too_few(books),
    )  # fmt: skip


def _corpus(corpus_value: Callable[[Sequence[object]], float | None], rows: Sequence[object]) -> float:
    value = corpus_value(rows)
    return math.nan if value is None else float(value)
