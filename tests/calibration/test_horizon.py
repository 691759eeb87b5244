"""The copy horizon reads as RULER's effective length: the largest distance up to which every distance
tried is found; a copy found again past a gap is reported, never taken as the horizon. The keep-last
check wants, per distance, a K that reaches the copy and one that keeps it."""

from __future__ import annotations

import pytest

from longread.calibration.report import horizon_sentence
from longread.calibration.run import CalibrationError, CalibrationPlan, check_plan
from longread.calibration.verdicts import Family, Placement, copy_horizon, intact_row
from longread.metrics.paired import paired_scores

BOOKS = [f"book-{i % 6}" for i in range(30)]


def _gain(found: bool):  # type: ignore[no-untyped-def]
    """30 planted instances in 6 books: the copy found (24 more right) or not (1 more right)."""
    unplanted = [False] * 30
    planted = [i < (24 if found else 1) for i in range(30)]
    return paired_scores(unplanted, planted, clusters=BOOKS)


def _rows(found: dict[int, bool]):  # type: ignore[no-untyped-def]
    gains = {d: _gain(f) for d, f in found.items()}
    family = Family(list(gains.values()))
    return [intact_row(1024, Placement(d, d, d, 16), gains[d], family) for d in sorted(gains)]


def test_a_gap_stops_the_horizon_and_is_reported() -> None:
    rows = _rows({256: True, 512: False, 768: True})
    horizon = copy_horizon(rows, 1024)
    assert (horizon.distance, horizon.below, horizon.found_beyond) == (256, 512, (768,))
    words = horizon_sentence(horizon)
    assert "at least 256 tokens" in words and "a gap: found again at 768 tokens" in words


def test_every_distance_found_gives_the_farthest() -> None:
    horizon = copy_horizon(_rows({256: True, 512: True, 768: True}), 1024)
    assert (horizon.distance, horizon.below, horizon.found_beyond) == (768, None, ())
    nothing = copy_horizon(_rows({256: False, 512: True}), 1024)
    assert (nothing.distance, nothing.below, nothing.found_beyond) == (None, 256, (512,))


def test_keep_last_must_bracket_each_distance() -> None:
    # 300 reaches the copy at 1,000 and keeps the one at 200; 900 keeps neither at 1,000 nor reaches 200's
    with pytest.raises(CalibrationError, match="does not bracket distance 200,1000 of 200,1000"):
        check_plan(CalibrationPlan((200, 1000), ("none",), (300, 900), 64), [2048])
    check_plan(CalibrationPlan((200, 1000), ("none",), (100, 300, 900, 1100), 64), [2048])
