"""The claim rule and its sentences, branch by branch, on real paired outcomes (not hand-set intervals):
an effect needs the interval to exclude 0 and McNemar's p < 0.05; a null states the size it rules out."""

from __future__ import annotations

import numpy as np
import pytest

from longread.metrics.claims import claim
from longread.metrics.paired import paired_scores
from longread.report.context_use import sentence


def _outcomes(n: int, lost: int, gained: int) -> tuple[list[bool], list[bool]]:
    """n paired right/wrong outcomes: ``lost`` right only intact, ``gained`` right only controlled, the
    rest right in both (half) or wrong in both."""
    intact = [True] * lost + [False] * gained
    controlled = [False] * lost + [True] * gained
    rest = n - lost - gained
    intact += [k % 2 == 0 for k in range(rest)]
    controlled += [k % 2 == 0 for k in range(rest)]
    return intact, controlled


def _say(n: int, lost: int, gained: int) -> tuple[str, str]:
    intact, controlled = _outcomes(n, lost, gained)
    s = paired_scores(intact, controlled, seed=0)
    words = sentence("replace", 256, "accuracy", s.difference, s.ci_low, s.ci_high, s.mcnemar_p, True, s.n)
    return claim(s.ci_low, s.ci_high, s.mcnemar_p, s.n).kind, words


def test_an_effect_that_holds_on_both_tests() -> None:
    kind, words = _say(40, lost=16, gained=0)
    assert kind == "effect"
    assert words.startswith("replacing everything before the last 256 tokens lowers accuracy by 0.40 [")
    assert words.endswith("(p < 0.001): the model uses the distant context")


def test_twenty_pairs_four_lost_none_gained_is_not_established() -> None:
    intact, controlled = _outcomes(20, lost=4, gained=0)
    s = paired_scores(intact, controlled, seed=0)
    assert s.ci_high < 0  # the interval alone would claim it …
    assert s.mcnemar_p == pytest.approx(2 / 16)  # … McNemar does not: 2 · (1/2)^4
    kind, words = _say(20, lost=4, gained=0)
    assert kind == "not established"
    assert "lowers accuracy by −0.20 [" in words and "p = 0.125" in words
    assert words.endswith("not established (McNemar's p = 0.125 is not below 0.05)")
    assert "uses the distant context" not in words


def test_a_null_states_the_size_it_rules_out() -> None:
    kind, words = _say(100, lost=3, gained=3)
    intact, controlled = _outcomes(100, lost=3, gained=3)
    s = paired_scores(intact, controlled, seed=0)
    bound = max(abs(s.ci_low), abs(s.ci_high))
    assert kind == "null" and 0.02 <= bound <= 0.08
    assert f"changes accuracy by no more than ±{bound:.2f} (95%; difference +0.00 [" in words
    assert "p = 1.000, 100 paired)" in words and "nothing measurable" not in words


def test_a_raise_says_the_model_does_better_without_it() -> None:
    kind, words = _say(40, lost=0, gained=12)
    assert kind == "effect"
    assert " raises accuracy by 0.30 [" in words and words.endswith("the model does better without it")


def test_too_few_pairs_claim_nothing_and_a_metric_without_p_uses_the_interval() -> None:
    kind, words = _say(4, lost=4, gained=0)
    assert kind == "too few" and words.endswith("on 4 paired instance(s): too few to say")
    rng = np.random.default_rng(1)
    a = list(rng.normal(0.5, 0.1, 30))
    b = [value - 0.2 for value in a]
    s = paired_scores(a, b, seed=0)
    assert s.mcnemar_p is None and claim(s.ci_low, s.ci_high, None, s.n).kind == "effect"
    assert claim(-0.05, 0.04, None, 30).bound == pytest.approx(0.05)


def test_a_book_level_bootstrap_widens_the_interval_where_books_differ() -> None:
    # 4 books of 10 instances: two books lose every instance, two lose none; instances agree within a book
    intact = [True] * 40
    controlled = [False] * 20 + [True] * 20
    books = [f"book-{i // 10}" for i in range(40)]
    by_item = paired_scores(intact, controlled, seed=0)
    by_book = paired_scores(intact, controlled, seed=0, clusters=books)
    assert (by_item.resampled, by_book.resampled, by_book.clusters) == ("instances", "books", 4)
    assert by_book.difference == by_item.difference == -0.5 and by_book.mcnemar_p == by_item.mcnemar_p
    assert by_book.ci_high - by_book.ci_low > 2 * (by_item.ci_high - by_item.ci_low)
    # every resample is 0, 1, 2, 3 or 4 losing books of 4: the interval's ends are among those means
    assert {by_book.ci_low, by_book.ci_high} <= {-1.0, -0.75, -0.5, -0.25, 0.0}
    one_book = paired_scores(intact, controlled, seed=0, clusters=["only"] * 40)
    assert one_book.resampled == "instances" and one_book.clusters == 1
    with pytest.raises(ValueError, match="name every item"):
        paired_scores(intact, controlled, clusters=books[:3])


def test_a_null_where_no_pair_differs_rules_out_only_what_its_count_can() -> None:
    """20 pairs that all agree: the bootstrap's interval is [0, 0], but 20 instances cannot rule out a
    change of one in 10; the bound is the exact one-sided 95% bound on disagreement, 1 − 0.05^(1/20)."""
    kind, words = _say(20, lost=0, gained=0)
    said = claim(0.0, 0.0, 1.0, 20)
    assert kind == "null" and said.bound == pytest.approx(0.1391, abs=1e-4)
    assert "changes accuracy by no more than ±0.14 (95%; difference +0.00 [+0.00, +0.00]" in words
    assert claim(0.0, 0.0, 1.0, 300).bound == pytest.approx(0.00994, abs=1e-4)  # about 3/n
    # one pair that differs: the interval's own bound, wider than zero
    assert claim(-0.05, 0.0, 1.0, 20).bound == pytest.approx(0.05)
