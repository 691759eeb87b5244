"""The long-window demo: lengths fitted to the model's window (said, never silent); the demo end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longread.demos.long_window import fit_lengths, run_long_window_demo


def test_lengths_over_the_window_are_lowered_to_the_longest_that_fits_and_said() -> None:
    fitted = fit_lengths([1024, 32768, 16384], 32768, suffix_tokens=128, start_tokens=1)
    assert fitted.lengths == (1024, 16384, 32640)
    assert len(fitted.notes) == 1
    assert "32,768 lowered to 32,640" in fitted.notes[0]


def test_two_lengths_that_both_overflow_become_one() -> None:
    fitted = fit_lengths([4096, 8192], 2048, suffix_tokens=128, start_tokens=0)
    assert fitted.lengths == (1921,)
    assert len(fitted.notes) == 2


def test_a_window_too_small_for_a_candidate_is_an_error() -> None:
    with pytest.raises(ValueError, match="holds no prefix"):
        fit_lengths([1024], 100, suffix_tokens=128)


def test_demo_scores_every_length_on_the_long_instances_and_draws_the_curve(tmp_path: Path) -> None:
    # A tiny seeded model (a 2,048-token window) stands in for Gemma: the pipeline, not the accuracy.
    demo = run_long_window_demo(tmp_path, model="random:llama", lengths=(256, 4096), sample=1, threads=1)
    assert demo.lengths == (256, 1921)
    assert demo.notes
    rows = [json.loads(line) for line in (demo.run / "samples.jsonl").read_text().splitlines()]
    assert sorted(row["prefix_length"] for row in rows) == [256, 1921]
    assert {row["context_tokens_kept"] for row in rows} == {256, 1921}
    assert demo.plot.stat().st_size > 0
    assert "1921" in demo.table.replace(",", "")
