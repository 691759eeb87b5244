"""The interval's stated 95%, measured: simulated paired runs shaped like the documented ones (5 books,
base accuracy 0.4, a true drop of 0.10), fixed seeds. The percentile cluster bootstrap longread used
before held the truth in about 85% of runs; the interval paired_scores gives now holds it in at least
94% (bench/interval_coverage.py measures the whole grid)."""

from __future__ import annotations

import numpy as np
import pytest

from longread.metrics import simulation as sim
from longread.metrics.paired import paired_scores

REPLICATES = 300


@pytest.mark.parametrize("per_book", [4, 20])
def test_the_book_level_interval_covers_at_five_books(per_book: int) -> None:
    cell = sim.design(5, per_book)
    truth = sim.binary_truth(0.4, -0.1, heterogeneous=True)
    a, b = sim.binary_replicates(np.random.default_rng(per_book), cell, REPLICATES, 0.4, -0.1, True)
    before = sim.covers(sim.percentile_bootstrap(b.astype(float) - a.astype(float), cell), truth).mean()
    books = [f"book-{c}" for c in cell.codes]
    held = 0
    for first, later in zip(a, b, strict=True):
        s = paired_scores([bool(x) for x in first], [bool(x) for x in later], clusters=books)
        held += s.ci_low <= truth <= s.ci_high
    now = held / REPLICATES
    assert before < 0.90, f"the old interval covered {before:.3f}"
    assert now >= 0.94, f"the interval covers only {now:.3f} at 5 books × {per_book}"


def test_no_true_difference_rarely_makes_an_effect() -> None:
    """The claim rule's false-effect rate where nothing differs, 10 books of 4, at most 5% (+ MC error)."""
    cell = sim.design(10, 4)
    a, b = sim.binary_replicates(np.random.default_rng(9), cell, REPLICATES, 0.5, 0.0, True)
    books = [f"book-{c}" for c in cell.codes]
    effects = 0
    for first, later in zip(a, b, strict=True):
        s = paired_scores([bool(x) for x in first], [bool(x) for x in later], clusters=books)
        effects += (s.ci_low > 0 or s.ci_high < 0) and s.p is not None and s.p < 0.05
    assert effects / REPLICATES <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / REPLICATES)
