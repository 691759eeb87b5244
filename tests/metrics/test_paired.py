"""McNemar's exact test, Tango's interval, the CR2 cluster interval and the jackknife against values
worked out by hand or published."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from longread.metrics.cluster_t import bell_mccaffrey_df, cluster_mean_interval, jackknife_interval
from longread.metrics.paired import mcnemar_exact_p, paired_corpus_scores, paired_scores
from longread.metrics.tango import tango_interval


def test_mcnemar_exact_matches_the_binomial_by_hand() -> None:
    assert mcnemar_exact_p(1, 5) == pytest.approx(2 * (1 + 6) / 64)  # 2 · P(X ≤ 1), X ~ Bin(6, 1/2)
    assert mcnemar_exact_p(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact_p(3, 3) == 1.0 and mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_exact_p(5, 1) == mcnemar_exact_p(1, 5)
    with pytest.raises(ValueError):
        mcnemar_exact_p(-1, 2)


@pytest.mark.parametrize(
    ("only_a", "only_b", "n", "confidence", "low", "high"),
    [
        (3, 9, 32, 0.95, -0.027090, 0.389697),  # Tango 1998, Table VII
        (1, 0, 44, 0.90, -0.095662, 0.036517),  # Tango 1998, Table V
        (7, 1, 21, 0.95, -0.517232, -0.026003),  # Fagerland et al. 2014 (Bentur)
        (16, 6, 161, 0.95, -0.124023, -0.005433),  # contingencytables' Cavo data
    ],
)
def test_tango_matches_published_intervals(
    only_a: int, only_b: int, n: int, confidence: float, low: float, high: float
) -> None:
    assert tango_interval(only_a, only_b, n, confidence) == pytest.approx((low, high), abs=2e-6)


def test_tango_without_discordant_pairs_is_not_zero_width() -> None:
    z2 = 1.959963984540054**2
    assert tango_interval(0, 0, 20) == pytest.approx((-z2 / (20 + z2), z2 / (20 + z2)))
    assert tango_interval(0, 10, 10)[1] == 1.0 and tango_interval(10, 0, 10)[0] == -1.0


def test_cr2_with_equal_books_is_the_t_interval_of_the_book_means() -> None:
    rng = np.random.default_rng(3)
    values = rng.normal(0.2, 1.0, 30)
    books = [f"b{i // 5}" for i in range(30)]
    got = cluster_mean_interval(values, books)
    means = values.reshape(6, 5).mean(axis=1)
    half = stats.t.ppf(0.975, 5) * means.std(ddof=1) / math.sqrt(6)
    assert got.df == pytest.approx(5.0)
    assert (got.low, got.high) == pytest.approx((means.mean() - half, means.mean() + half))
    # one item a book: the one-sample t interval
    single = cluster_mean_interval(values, None)
    half = stats.t.ppf(0.975, 29) * values.std(ddof=1) / math.sqrt(30)
    assert (single.low, single.high, single.df) == pytest.approx(
        (values.mean() - half, values.mean() + half, 29)
    )


def test_bell_mccaffrey_df_falls_where_one_book_holds_most_items() -> None:
    assert bell_mccaffrey_df([4] * 5) == pytest.approx(4.0)
    assert bell_mccaffrey_df([40, 1, 1, 1, 1]) < 1.5 < bell_mccaffrey_df([10, 8, 6, 4, 2]) < 4.0


def test_the_jackknife_of_a_mean_over_equal_books_is_cr2() -> None:
    rng = np.random.default_rng(4)
    values = rng.normal(0, 1, 40)
    books = [f"b{i % 8}" for i in range(40)]
    jack = jackknife_interval(lambda idx: float(values[idx].mean()), 40, books)
    cr2 = cluster_mean_interval(values, books)
    assert (jack.low, jack.high) == pytest.approx((cr2.low, cr2.high))


def test_paired_scores_of_floats_have_no_mcnemar_and_a_t_interval() -> None:
    a, b = [0.1, 0.5, 0.2, 0.9], [0.3, 0.6, 0.2, 1.0]
    scores = paired_scores(a, b)
    assert scores.difference == pytest.approx(0.1) and scores.mcnemar_p is None and scores.only_a is None
    assert scores == paired_scores(a, b)
    assert scores.ci_low <= scores.difference <= scores.ci_high and scores.p is not None


def test_a_book_level_interval_widens_where_books_differ() -> None:
    # 6 books of 10 instances: three books lose every instance, three lose none
    intact = [True] * 60
    controlled = [False] * 30 + [True] * 30
    books = [f"book-{i // 10}" for i in range(60)]
    by_item = paired_scores(intact, controlled)
    by_book = paired_scores(intact, controlled, clusters=books)
    assert (by_item.level, by_book.level, by_book.clusters) == ("instances", "books", 6)
    assert by_book.difference == by_item.difference == -0.5 and by_book.mcnemar_p == by_item.mcnemar_p
    assert by_book.ci_high - by_book.ci_low > 2 * (by_item.ci_high - by_item.ci_low)
    assert by_book.p is not None and by_book.mcnemar_p is not None and by_book.p > by_book.mcnemar_p
    one_book = paired_scores(intact, controlled, clusters=["only"] * 60)
    assert one_book.level == "instances" and one_book.clusters == 1 and not one_book.too_few_books
    with pytest.raises(ValueError, match="name every item"):
        paired_scores(intact, controlled, clusters=books[:3])


def test_a_corpus_metric_is_jackknifed_by_book() -> None:
    rng = np.random.default_rng(5)
    hits_a = rng.integers(0, 10, 60)
    hits_b = hits_a + rng.integers(0, 3, 60)
    rows_a = [{"hits": int(h), "length": 10} for h in hits_a]
    rows_b = [{"hits": int(h), "length": 10} for h in hits_b]

    def ratio(rows: object) -> float:
        chosen = list(rows)  # type: ignore[call-overload]
        return sum(r["hits"] for r in chosen) / sum(r["length"] for r in chosen)

    books = [f"b{i % 6}" for i in range(60)]
    scores = paired_corpus_scores(rows_a, rows_b, ratio, clusters=books)
    assert scores.level == "books" and scores.method.startswith("jackknife by book")
    assert scores.ci_low < scores.difference < scores.ci_high and scores.difference > 0


def test_a_right_wrong_interval_never_reaches_past_one() -> None:
    # 15 instances of 5 books, 12 gained: the CR2 t interval (4 df) reached +1.17 before it was cut
    before = [False] * 15
    after = [True] * 12 + [False] * 3
    books = [f"b{i % 5}" for i in range(15)]
    scores = paired_scores(before, after, clusters=books)
    assert scores.level == "books" and scores.difference == 0.8
    assert scores.ci_high == 1.0 and 0 < scores.ci_low < 0.8
    flipped = paired_scores(after, before, clusters=books)
    assert flipped.ci_low == -1.0 and -0.8 < flipped.ci_high < 0
