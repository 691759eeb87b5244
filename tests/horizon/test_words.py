"""The used context read from the K tried, and the sentence it allows: never more than the claims."""

from __future__ import annotations

from dataclasses import replace

from longread.horizon.verdicts import KeepRow, LengthAnswer, simultaneous_confidence, used_context
from longread.horizon.words import answer_sentence
from longread.metrics.claims import claim
from longread.metrics.paired import PairedScores, paired_scores

BOOKS = [f"book{i % 10}" for i in range(100)]


def row(keep: int, lost: int, gained: int = 0) -> KeepRow:
    """100 paired instances of 10 books, 40 right intact; ``lost`` turn wrong and ``gained`` right."""
    intact = [i < 40 for i in range(100)]
    controlled = [(i < 40 - lost) or (40 <= i < 40 + gained) for i in range(100)]
    s: PairedScores = paired_scores(intact, controlled, clusters=BOOKS)
    said = claim(s.ci_low, s.ci_high, s.p, s.n, discordant=s.discordant, too_few_books=s.too_few_books)
    return KeepRow(keep, s, said, s.p)


def answer(*rows: KeepRow) -> LengthAnswer:
    said = used_context(rows, 0.05)
    return LengthAnswer("smollm2", 1024, 100, 10, 0.4, keeps=list(rows), used=said.used, bound=said.bound,
                        below=said.below, delta_keep=said.delta_keep)  # fmt: skip


def test_the_used_context_is_the_smallest_k_of_an_unbroken_run_of_nulls_its_bound_the_widest() -> None:
    a = answer(row(512, 0), row(256, 1, 1), row(128, 30), row(64, 0))  # 64: a null after use, not counted
    assert [r.claim.kind for r in a.keeps] == ["null", "null", "effect", "null"]
    assert a.used == 256 and a.below is not None and a.below.keep == 128
    widest = max(r.claim.bound or 0 for r in a.keeps[:2])
    assert a.bound == widest and a.bound > a.keeps[0].claim.bound  # type: ignore[operator]
    assert a.delta_keep == 256  # both nulls lie within ±0.05 (0.037 and 0.046)


def test_without_a_gate_a_null_is_not_read_as_a_used_context() -> None:
    a = answer(row(512, 0), row(256, 0), row(128, 30))
    a.gate_reason = "the model was not shown to use a copy planted beyond K (at 384 tokens)"
    text = answer_sentence(a, "replace", 0.05)
    assert "replacing all but smollm2's last 256 tokens changes accuracy by no more than" in text
    assert "could not tell" in text and "depend on no more" not in text
    assert "lowers accuracy by 0.30" in text and "use shown" in text  # the K below, where use was shown


def test_a_largest_k_that_is_not_an_effect_says_use_was_not_ruled_out_not_that_it_was_shown() -> None:
    undecided = answer(row(512, 5))  # the interval excludes 0, McNemar's p = 0.0625: not established
    assert undecided.used is None and undecided.below is not None
    text = answer_sentence(undecided, "replace", 0.05)
    assert "could not be ruled out" in text and "depend on more than" not in text
    shown = answer_sentence(answer(row(512, 30)), "replace", 0.05)
    assert "depend on more than its last 512 tokens" in shown


def test_a_bound_wider_than_delta_is_said_with_what_delta_would_take() -> None:
    a = answer(row(512, 2, 2), row(256, 30))
    text = answer_sentence(a, "replace", 0.05)
    assert a.bound is not None and a.bound > 0.05
    assert f"±{a.bound:.2f}, the smallest these data allow here, wider than the ±0.05 asked" in text
    assert "ruling out ±0.05 would take about" in text and "books" in text


def test_the_k_the_search_picked_is_given_with_its_interval_simultaneous_over_the_k_tried() -> None:
    """The next K below is the first the search found not a null: its 95% interval, picked so, would
    overstate the drop (docs/statistics.md); the sentence gives the Bonferroni one over the K tried."""
    intact = [i < 40 for i in range(100)]
    lost = [i < 10 for i in range(100)]
    wide = paired_scores(intact, lost, clusters=BOOKS, confidence=simultaneous_confidence(3))
    plain = row(128, 30)
    picked = replace(plain, simultaneous=wide)
    text = answer_sentence(answer(row(512, 0), row(256, 0), picked), "replace", 0.05)
    assert wide.ci_low < plain.scores.ci_low and wide.ci_high > plain.scores.ci_high  # wider
    near, far = sorted((abs(wide.ci_low), abs(wide.ci_high)))
    assert f"lowers accuracy by 0.30 [{near:.2f}, {far:.2f}]" in text
    assert "the interval holds over all 3 K tried" in text


def test_an_intact_run_no_better_than_chance_is_said_to_have_had_little_to_lower() -> None:
    a = answer(row(512, 0), row(256, 0), row(128, 30))  # intact accuracy 0.4
    warned = "no better than chance"
    assert warned not in answer_sentence(a, "replace", 0.05, chance=1 / 6)
    floor = replace(a, intact=0.1)
    text = answer_sentence(floor, "replace", 0.05, chance=1 / 6)
    assert text.startswith(answer_sentence(floor, "replace", 0.05))
    assert "Its intact accuracy, 0.100, is no better than chance (0.167)" in text
