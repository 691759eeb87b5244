"""Resuming under other threads is allowed; re-scored rows are held to the log-prob tolerance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.io import write_instances
from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.evaluation import RunOptions, run_task
from longread.models.tolerance import summed_logprob_tolerance
from tests.fake_backends import ScriptedLM
from tests.helpers import synthetic_book
from tests.models_fixtures import tuned

TASK = ChapterBreakTask(ChapterBreakSettings(prefix_lengths=(48,), suffix_tokens=12))


@pytest.fixture(scope="module")
def data_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    instances = build_book(synthetic_book(9, book_id="a"), BuildOptions(prefix_tokens=200, suffix_tokens=24))
    path = tmp_path_factory.mktemp("recheck") / "cb.jsonl"
    write_instances(instances.instances, path)
    return path


def quiet(**kwargs: object) -> RunOptions:
    return RunOptions(show_progress=False, **kwargs)  # type: ignore[arg-type]


def test_resume_under_other_threads_is_accepted_and_keeps_the_rows(data_file: Path, tmp_path: Path) -> None:
    """SmolLM2 scored with 2 threads, resumed with 1: the same run (threads are runtime), rows kept, and the
    re-scored rows agree within the tolerance."""
    model = tuned("smollm2")
    run = tmp_path / "run"
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        run_task(TASK, data_file, model, run, quiet(limit=2))
        first = (run / "samples.jsonl").read_bytes()
        hash_before = json.loads((run / "config.json").read_text())["config_hash"]
        torch.set_num_threads(1)
        outcome = run_task(TASK, data_file, model, run, quiet(resume=True, recheck=2))
    finally:
        torch.set_num_threads(before)
    assert outcome.skipped_done == 2 and outcome.scored == 1
    assert (run / "samples.jsonl").read_bytes().startswith(first)
    assert outcome.recheck is not None and len(outcome.recheck.keys) == 2
    assert outcome.recheck.differences == [] and outcome.recheck.failed == []
    config = json.loads((run / "config.json").read_text())
    assert config["config_hash"] == hash_before
    assert "threads" not in config["config"]["model"]
    threads = [session["runtime"]["backend"]["threads"] for session in config["sessions"]]
    assert threads == ["2", "1"]
    assert config["sessions"][1]["recheck"]["keys"] == outcome.recheck.keys


def test_a_stored_row_off_by_more_than_the_tolerance_is_reported(data_file: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    run_task(TASK, data_file, ScriptedLM(), run, quiet(limit=2))
    rows = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    tolerance = summed_logprob_tolerance(max(rows[0]["continuation_tokens"]))
    rows[0]["logprobs"][2] += 10 * tolerance  # wrong on purpose: past the tolerance
    rows[1]["logprobs"][1] += tolerance / 10  # the last digits of another thread count: within it
    (run / "samples.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))

    outcome = run_task(TASK, data_file, ScriptedLM(), run, quiet(resume=True, recheck=5))
    report = outcome.recheck
    assert report is not None and sorted(report.keys) == sorted(row["key"] for row in rows)
    assert report.differing_keys == [rows[0]["key"]]
    (difference,) = report.differences
    assert difference.field == "logprobs[2]" and difference.tolerance == pytest.approx(tolerance)
    assert difference.stored == pytest.approx(difference.now + 10 * tolerance)
    lines = report.lines()
    assert "1 differ past the tolerance" in lines[0] and f"{rows[0]['key']}: logprobs[2]" in lines[1]
    stored = json.loads((run / "config.json").read_text())["sessions"][-1]["recheck"]
    assert stored["differing_keys"] == [rows[0]["key"]]
    # The recheck reports; it does not rewrite what was stored.
    kept = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    assert kept[:2] == rows and outcome.skipped_done == 2

    # recheck=0 (the library's default) asks nothing again.
    again = ScriptedLM()
    assert run_task(TASK, data_file, again, run, quiet(resume=True)).recheck is None and again.calls == []


def test_a_choice_flipped_between_near_tied_scores_is_a_near_tie_not_a_difference() -> None:
    """Two options whose log-probs agree within the tolerance may swap under another order of sums (the
    thread count): only then is a flipped prediction a near tie; numbers past the tolerance never are."""
    from longread.evaluation.recheck import RowDifference, _near_tie_flip

    flipped = [RowDifference("k", "prediction", 0, 5, None), RowDifference("k", "tie", True, False, None)]
    tied = {"logprobs": [-12.5, -30.0, -12.5 + 1e-6], "prediction": 5}
    apart = {"logprobs": [-12.5, -30.0, -11.0], "prediction": 5}
    assert _near_tie_flip(flipped, tied, tolerance=1e-4)
    assert not _near_tie_flip(flipped, apart, tolerance=1e-4)
    moved = [*flipped, RowDifference("k", "logprobs[0]", -12.5, -12.0, 1e-4)]
    assert not _near_tie_flip(moved, tied, tolerance=1e-4)
    assert not _near_tie_flip([RowDifference("k", "text", "a", "b", None)], tied, tolerance=1e-4)
