"""McNemar's exact test and paired scores, against values worked out by hand."""

from __future__ import annotations

import pytest

from longread.metrics.paired import mcnemar_exact_p, paired_scores


def test_mcnemar_exact_matches_the_binomial_by_hand() -> None:
    assert mcnemar_exact_p(1, 5) == pytest.approx(2 * (1 + 6) / 64)  # 2 · P(X ≤ 1), X ~ Bin(6, 1/2)
    assert mcnemar_exact_p(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact_p(3, 3) == 1.0 and mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_exact_p(5, 1) == mcnemar_exact_p(1, 5)
    with pytest.raises(ValueError):
        mcnemar_exact_p(-1, 2)


def test_paired_scores_of_floats_have_no_mcnemar_and_a_seeded_interval() -> None:
    a, b = [0.1, 0.5, 0.2, 0.9], [0.3, 0.6, 0.2, 1.0]
    scores = paired_scores(a, b, seed=4)
    assert scores.difference == pytest.approx(0.1) and scores.mcnemar_p is None and scores.only_a is None
    assert scores == paired_scores(a, b, seed=4)
    assert scores.ci_low <= scores.difference <= scores.ci_high
