"""config.json lists every session of a run with its own runtime, not only the first's."""

from __future__ import annotations

import json
from pathlib import Path

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.io import write_instances
from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.evaluation import RunOptions, run_task
from tests.fake_backends import ScriptedLM
from tests.helpers import synthetic_book


def test_config_lists_every_sessions_runtime_after_a_resume_with_another_sample(tmp_path: Path) -> None:
    data = tmp_path / "cb.jsonl"
    instances = []
    for name in ("a", "b", "c"):
        instances += build_book(synthetic_book(9, book_id=name), BuildOptions(prefix_tokens=200)).instances
    write_instances(instances, data)
    task = ChapterBreakTask(ChapterBreakSettings(prefix_lengths=(32,)))
    run = tmp_path / "run"
    run_task(task, data, ScriptedLM(), run, RunOptions(show_progress=False, sample=6))
    run_task(task, data, ScriptedLM(), run, RunOptions(show_progress=False, sample=3, resume=True, recheck=1))
    config = json.loads((run / "config.json").read_text())
    sessions = config["sessions"]
    assert [session["runtime"]["sample"] for session in sessions] == [6, 3]
    assert [session["resumed"] for session in sessions] == [False, True]
    assert "recheck" not in sessions[0] and sessions[1]["recheck"]["differing_keys"] == []
    # config.runtime stays the first session's (what made the run); selection.json says what was summarised.
    assert config["config"]["runtime"]["sample"] == 6
    assert len(json.loads((run / "selection.json").read_text())["keys"]) == 3
    timing = json.loads((run / "timing.json").read_text())
    assert [session["runtime"]["sample"] for session in timing["sessions"]] == [6, 3]
    assert [session["ended"] for session in timing["sessions"]] == ["closed", "closed"]
