"""timing.json counts the rows of a session that was killed, not only of those that ended."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.io import write_instances
from tests.helpers import kill_after_rows, start_paused, synthetic_book

# As tests/benchmarks/chapterbreak/test_task.py kills a run: a tiny model, many lengths (48 samples).
TINY = "random:gpt2"
LENGTHS = "32,48,64,80,96,112,128,144"


def _eval(data: Path, run: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "longread.cli", "eval", "chapterbreak", "--data", str(data), "--model", TINY,
        "--out", str(run), "--prefix-lengths", LENGTHS, "--suffix-tokens", "16", "--quiet", *extra,
    ]  # fmt: skip


def test_a_killed_sessions_rows_are_counted(tmp_path: Path) -> None:
    data = tmp_path / "cb.jsonl"
    instances = []
    for name in ("a", "b"):
        instances += build_book(synthetic_book(9, book_id=name), BuildOptions(prefix_tokens=300)).instances
    write_instances(instances, data)
    run = tmp_path / "run"
    marker = tmp_path / "paused"
    process = start_paused(_eval(data, run, "--threads", "1"), 4, marker)
    samples = run / "samples.jsonl"
    kept = kill_after_rows(process, samples, marker)
    assert kept == 4, "the kill lands after the fourth row"

    resumed = subprocess.run(_eval(data, run, "--resume", "--threads", "2"), capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert "recheck: re-scored 2 finished sample(s)" in resumed.stdout
    timing = json.loads((run / "timing.json").read_text())
    killed, finished = timing["sessions"]
    assert (killed["samples"], killed["ended"], killed["rows_at_start"]) == (kept, "killed", 0)
    assert (finished["samples"], finished["ended"], finished["rows_at_start"]) == (48 - kept, "closed", kept)
    assert timing["total"]["samples"] == 48
    sessions = json.loads((run / "config.json").read_text())["sessions"]
    assert [session["runtime"]["backend"]["threads"] for session in sessions] == ["1", "2"]
