"""Accuracy intervals, grouped accuracy, bootstrap and word perplexity against golden values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from longread.metrics import (
    AccuracySummary,
    accuracy_by,
    bootstrap_interval,
    pooled_word_perplexity,
    wilson_interval,
    word_perplexity,
)


@pytest.mark.parametrize(
    ("successes", "n", "confidence", "expected"),
    [
        # Wilson score interval by hand: (p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n),
        # cross-checked as the roots of (p − x)² = z²·x(1 − x)/n.
        (8, 10, 0.95, (0.4902, 0.9433)),
        (0, 10, 0.95, (0.0, 0.2775)),
        (10, 10, 0.95, (0.7225, 1.0)),
        (9, 40, 0.95, (0.1232, 0.3750)),
        (50, 100, 0.90, (0.4188, 0.5812)),
        (1, 1, 0.95, (0.2065, 1.0)),
    ],
)
def test_wilson_golden_values(
    successes: int, n: int, confidence: float, expected: tuple[float, float]
) -> None:
    low, high = wilson_interval(successes, n, confidence)
    assert low == pytest.approx(expected[0], abs=5e-5)
    assert high == pytest.approx(expected[1], abs=5e-5)


def test_wilson_no_data_is_nan_and_bad_counts_are_errors() -> None:
    assert all(math.isnan(bound) for bound in wilson_interval(0, 0))
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
    with pytest.raises(ValueError):
        wilson_interval(1, 2, confidence=1.0)


@given(st.integers(min_value=1, max_value=10_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_bounds_lie_in_unit_interval_around_the_estimate(counts: tuple[int, int]) -> None:
    successes, n = counts
    low, high = wilson_interval(successes, n)
    assert 0.0 <= low <= successes / n <= high <= 1.0


def test_accuracy_by_groups_in_numeric_order_and_reaches_into_metadata() -> None:
    rows = [
        {"key": "a@1024", "prefix_length": 1024, "correct": True, "metadata": {"split": "pg19"}},
        {"key": "a@256", "prefix_length": 256, "correct": False, "metadata": {"split": "ao3"}},
        {"key": "b@1024", "prefix_length": 1024, "correct": 0, "metadata": {"split": "pg19"}},
        {"key": "b@512", "prefix_length": 512, "correct": 1, "metadata": {"split": "ao3"}},
    ]
    by_length = accuracy_by(rows, "prefix_length")
    assert list(by_length) == [256, 512, 1024]
    assert by_length[1024] == AccuracySummary.from_counts(1, 2)
    assert by_length[1024].accuracy == 0.5
    assert list(accuracy_by(rows, "metadata.split")) == ["ao3", "pg19"]
    assert accuracy_by(rows, lambda row: row["prefix_length"] >= 1024)[True].n == 2


def test_accuracy_by_names_the_row_with_a_bad_outcome() -> None:
    with pytest.raises(ValueError, match="'x@256'"):
        accuracy_by([{"key": "x@256", "prefix_length": 256, "correct": "yes"}], "prefix_length")


def test_bootstrap_is_deterministic_and_covers_the_mean() -> None:
    values = np.random.default_rng(7).normal(loc=3.0, scale=1.0, size=200)
    first = bootstrap_interval(values, np.mean, n_resamples=500, seed=3)
    assert first == bootstrap_interval(values, np.mean, n_resamples=500, seed=3)
    assert first != bootstrap_interval(values, np.mean, n_resamples=500, seed=4)
    assert first[0] < float(np.mean(values)) < first[1]
    assert first[1] - first[0] == pytest.approx(2 * 1.96 / math.sqrt(200), rel=0.2)


def test_bootstrap_of_nothing_is_nan() -> None:
    assert all(math.isnan(bound) for bound in bootstrap_interval([], np.mean))


def test_word_perplexity_pools_log_probs_not_perplexities() -> None:
    assert word_perplexity(-math.log(40) * 10, 10) == pytest.approx(40.0)
    # Two samples: 10 words at ppl 10, 30 words at ppl 100. Pooled: exp((10·ln10 + 30·ln100)/40).
    pooled = pooled_word_perplexity([-10 * math.log(10), -30 * math.log(100)], [10, 30])
    assert pooled == pytest.approx(math.exp((10 * math.log(10) + 30 * math.log(100)) / 40))
    assert pooled != pytest.approx((10 + 100) / 2)
    assert math.isnan(word_perplexity(0.0, 0))
    with pytest.raises(ValueError, match="negative log-likelihood"):
        word_perplexity(12.5, 10)
