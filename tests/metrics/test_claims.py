"""The claim rule and its sentences, branch by branch, on real paired outcomes (not hand-set intervals):
an effect needs the interval to exclude 0 and the family's Holm-adjusted p below 0.05; a null states the
size it rules out, decided from the discordant counts, never from a zero-width interval."""

from __future__ import annotations

import numpy as np
import pytest

from longread.metrics import simulation as sim
from longread.metrics.claim_words import Evidence, sentence
from longread.metrics.claims import claim, holm, pilot_instances, plan_for
from longread.metrics.paired import PairedScores, paired_scores

WHAT = "replacing everything before the last 256 tokens"


def _outcomes(n: int, lost: int, gained: int) -> tuple[list[bool], list[bool]]:
    """n paired right/wrong outcomes: ``lost`` right only intact, ``gained`` right only controlled, the
    rest right in both (half) or wrong in both."""
    intact = [True] * lost + [False] * gained
    controlled = [False] * lost + [True] * gained
    rest = n - lost - gained
    intact += [k % 2 == 0 for k in range(rest)]
    controlled += [k % 2 == 0 for k in range(rest)]
    return intact, controlled


def _evidence(s: PairedScores, p: float | None = None) -> Evidence:
    return Evidence(s.difference, s.ci_low, s.ci_high, s.n, s.p if p is None else p, s.only_a, s.only_b,
                    s.too_few_books, s.clusters)  # fmt: skip


def _say(n: int, lost: int, gained: int) -> tuple[str, str]:
    s = paired_scores(*_outcomes(n, lost, gained))
    e = _evidence(s)
    return e.claim().kind, sentence(WHAT, "accuracy", e, True)


def test_an_effect_that_holds_on_both_tests() -> None:
    kind, words = _say(40, lost=16, gained=0)
    assert kind == "effect"
    assert words.startswith(f"{WHAT} lowers accuracy by 0.40 [0.26, 0.55]")
    assert words.endswith("(Holm-adjusted p < 0.001): the model uses the distant context")


def test_twenty_pairs_four_lost_none_gained_is_not_established() -> None:
    s = paired_scores(*_outcomes(20, lost=4, gained=0))
    assert s.ci_high < 0  # Tango's interval alone would claim it …
    assert s.mcnemar_p == pytest.approx(2 / 16) and s.p == s.mcnemar_p  # … McNemar does not: 2 · (1/2)^4
    kind, words = _say(20, lost=4, gained=0)
    assert kind == "not established"
    assert words.endswith("not established (the Holm-adjusted p = 0.125 is not below 0.05)")
    assert "uses the distant context" not in words


def test_a_null_states_the_size_it_rules_out_and_the_answers_that_changed() -> None:
    kind, words = _say(100, lost=3, gained=3)
    assert kind == "null"
    assert "changes accuracy by no more than ±0.06 (95%; difference +0.00 [−0.06, +0.06]" in words
    assert (
        "100 paired; 6 of 100 answers changed (3 lost, 3 gained)); ruling out ±0.05 would take about 141"
        in words
    )


def test_a_raise_says_the_model_does_better_without_it() -> None:
    kind, words = _say(40, lost=0, gained=12)
    assert kind == "effect"
    assert " raises accuracy by 0.30 [" in words and words.endswith("the model does better without it")


def test_too_few_pairs_claim_nothing_and_a_continuous_metric_has_its_t_test() -> None:
    kind, words = _say(4, lost=4, gained=0)
    assert kind == "too few" and words.endswith("on 4 paired instance(s): too few to say")
    rng = np.random.default_rng(1)
    a = list(rng.normal(0.5, 0.1, 30))
    b = [value - 0.2 + 0.01 * rng.normal() for value in a]
    s = paired_scores(a, b)
    assert s.mcnemar_p is None and s.p is not None and s.p < 1e-6 and s.method.startswith("CR2 by instance")
    assert claim(s.ci_low, s.ci_high, s.p, s.n).kind == "effect"
    assert claim(-0.05, 0.04, None, 30).bound == pytest.approx(0.05)


def test_cancelling_changes_in_every_book_are_no_zero_width_null() -> None:
    """20 pairs from 10 books, every pair discordant but cancelling within each book: the percentile
    cluster bootstrap gave [0, 0] and p = 1, so the rule said "no more than ±0.14" though all 20 answers
    changed. Now the interval holds Tango's (±0.40), and the sentence says what changed."""
    intact = [True, False] * 10
    controlled = [False, True] * 10
    books = [f"book-{i // 2}" for i in range(20)]
    cell = sim.Design(10, (2,) * 10)
    d = np.asarray(controlled, dtype=float) - np.asarray(intact, dtype=float)
    before = sim.percentile_bootstrap(d[None, :], cell)
    assert (before.low[0], before.high[0]) == (0.0, 0.0)  # the interval the old rule read as "no change"
    s = paired_scores(intact, controlled, clusters=books)
    assert s.level == "books" and s.discordant == 20
    assert s.ci_low <= -0.40 and s.ci_high >= 0.40
    e = _evidence(s)
    said = e.claim()
    assert said.bound is not None and said.bound >= 0.40  # never the rule of three's ±0.14
    words = sentence(WHAT, "accuracy", e, True)
    assert "20 of 20 answers changed (10 lost, 10 gained)" in words and "±0.14" not in words


def test_the_rule_of_three_only_where_no_pair_differs() -> None:
    """Decided from the counts: 20 pairs that all agree rule out only a change of 1 − 0.05^(1/20); an
    interval of [0, 0] with pairs that differ is not "no change"."""
    assert claim(0.0, 0.0, 1.0, 20, discordant=0).bound == pytest.approx(0.1391, abs=1e-4)
    assert claim(0.0, 0.0, 1.0, 300, discordant=0).bound == pytest.approx(0.00994, abs=1e-4)  # about 3/n
    assert claim(0.0, 0.0, 1.0, 20, discordant=20).bound == 0.0  # the interval's own: no floor from counts
    kind, words = _say(20, lost=0, gained=0)
    assert kind == "null" and "no more than ±0.16" in words  # Tango's interval is wider still: ±z²/(n + z²)


def test_few_books_claim_nothing_at_the_book_level() -> None:
    intact, controlled = _outcomes(30, lost=15, gained=0)
    three = [f"book-{i % 3}" for i in range(30)]
    s = paired_scores(intact, controlled, clusters=three)
    assert s.too_few_books and s.level == "instances" and s.clusters == 3
    e = _evidence(s)
    assert e.claim().kind == "too few books"
    assert sentence(WHAT, "accuracy", e, True).endswith(
        "on these 30 instances (3 books: too few books to claim; the interval is instance-level and speaks "
        "for these instances only)"
    )
    six = [f"book-{i % 6}" for i in range(30)]
    assert paired_scores(intact, controlled, clusters=six).level == "books"


def test_holm_adjusts_a_family_step_down() -> None:
    # the textbook example: 0.01, 0.04, 0.03, 0.005 → 0.03, 0.06, 0.06, 0.02
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, None, 0.01]) == [pytest.approx(0.5), None, pytest.approx(0.02)]
    assert holm([]) == []
    # one effect among twelve comparisons: p = 0.01 alone is an effect, adjusted it is not
    adjusted = holm([0.01] + [0.6] * 11)
    assert adjusted[0] == pytest.approx(0.12)
    assert claim(-0.3, -0.01, adjusted[0], 20).kind == "not established"


def test_planning_names_what_more_data_would_buy() -> None:
    # a null of ±0.20 on 20 pairs: four times the pairs halve it to ±0.10, 16 times to ±0.05
    plan = plan_for(0.05, 20, -0.20, 0.20, books=5, book_level=True)
    assert (plan.instances, plan.books) == (320, 80)
    assert plan_for(0.3, 20, -0.2, 0.2).instances == 20  # already there
    # 10% of pairs discordant: 1.96² · 0.1 / 0.05² ≈ 154 pairs rule out ±0.05
    assert pilot_instances(0.05, 0.10) == 154
    assert pilot_instances(0.05, 0.0) == 59  # nothing discordant: the rule of three, log 0.05 / log 0.95
    with pytest.raises(ValueError):
        plan_for(0.0, 20, -0.1, 0.1)
