"""``longread ablate``: the intact run and each control × K on the same samples, then the context-use
report — SmolLM2 on four real ChapterBreak instances from two Gutenberg books, small settings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.io import write_instances
from longread.cli.app import app
from longread.documents.reader import read_book
from tests.helpers import REPO_ROOT, gutenberg_book, needs_shared, unboxed


@needs_shared
def test_ablate_runs_every_control_on_the_same_samples_and_writes_the_context_use_report(
    tmp_path: Path,
) -> None:
    instances = []
    for book in (84, 1342):
        instances += build_book(read_book(gutenberg_book(book)), BuildOptions(prefix_tokens=256)).instances[
            2:4
        ]
    data = tmp_path / "cb.jsonl"
    write_instances(instances, data)
    out = tmp_path / "ablation"
    command = [
        sys.executable, "-m", "longread.cli", "ablate", "chapterbreak", "--data", str(data), "--model",
        "smollm2", "--out", str(out), "--keep-last", "0,32", "--controls", "none,replace", "-o",
        "prefix_lengths=64", "-o", "suffix_tokens=16", "--quiet",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = ["intact", "none-k0", "none-k32", "replace-k0", "replace-k32"]
    keys = {
        run: sorted(json.loads(line)["key"] for line in (out / run / "samples.jsonl").open()) for run in runs
    }
    assert all(keys[run] == keys["intact"] for run in runs) and len(keys["intact"]) == 4
    report = json.loads((out / "context_use.json").read_text())
    assert {(row["control"], row["keep_last"]) for row in report["rows"]} == {
        ("none", 0),
        ("none", 32),
        ("replace", 0),
        ("replace", 32),
    }
    assert all(row["paired"] == 4 and row["sentence"] for row in report["rows"])
    markdown = (out / "context_use.md").read_text()
    assert (
        "dropping the whole context" in markdown
        and "replacing everything before the last 32 tokens" in markdown
    )
    assert (out / "context_use.png").stat().st_size > 10_000 and (out / "html" / "index.html").exists()
    # Resumable: a second call redoes nothing and writes the same report.
    again = CliRunner().invoke(app, command[3:])  # in this process: the command as a process ran above
    assert again.exit_code == 0 and json.loads((out / "context_use.json").read_text()) == report


def test_a_metric_the_task_does_not_have_is_refused_before_the_model_loads(tmp_path: Path) -> None:
    data = tmp_path / "cb.jsonl"
    data.write_text("")
    command = ["ablate", "chapterbreak", "--data", str(data), "--model", "smollm2", "--out",
               str(tmp_path / "out"), "--metrics", "accuracy,margin"]  # fmt: skip
    done = CliRunner().invoke(app, command)  # in this process: a refusal needs no interpreter of its own
    message = unboxed(done.stderr)
    assert done.exit_code == 2 and "chapterbreak has no metric margin; its metrics: accuracy" in message
    assert not (tmp_path / "out").exists()
