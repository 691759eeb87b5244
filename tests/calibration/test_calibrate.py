"""``longread calibrate`` on real books and SmolLM2: the planted copy is found, every control that
reaches it removes the gain (``detects``), every control that keeps it keeps the gain (``keeps``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from longread.cli.app import app
from tests.calibration.data import write_bundled
from tests.helpers import REPO_ROOT, unboxed

SMALL = [
    "--prefix-lengths", "192", "--distances", "96", "--keep-last", "32,160", "--copy-tokens", "32",
    "-o", "suffix_tokens=16",
]  # fmt: skip
"""The copy is 32 tokens and each candidate scored on its first 16: the planted opening decides; 15 instances
(3 a book, 3 negatives each) give the horizon its p < 0.01 (measured: gain +0.67, p = 0.002; with 8 tokens
scored the copy is not found). K = 32 reaches every copy
(96 − 32 ≥ 32 tokens back); K = 160 keeps each whole (a copy starts at most 96 + 64 tokens back)."""


def test_calibrate_finds_the_planted_copy_and_every_control_behaves(tmp_path: Path) -> None:
    data = write_bundled(tmp_path / "cb.jsonl", per_book=3)
    out = tmp_path / "calibration"
    command = [
        sys.executable, "-m", "longread.cli", "calibrate", "chapterbreak", "--data", str(data), "--model",
        "smollm2", "--out", str(out), *SMALL, "--controls", "none", "--quiet",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((out / "calibration.json").read_text())
    rows = {(row["control"], row["keep_last"]): row for row in report["rows"]}
    assert set(rows) == {("intact", None), ("none", 32), ("none", 160)}
    intact = rows[("intact", None)]
    assert intact["paired"] == 15 and intact["books"] == 5
    assert intact["planted_gain"] >= 0.4 and intact["p"] < 0.01 and intact["verdict"] == "copies"
    for control in ("none",):
        assert rows[(control, 32)]["position"] == "perturbed" and rows[(control, 32)]["verdict"] == "detects"
        assert rows[(control, 160)]["position"] == "kept" and rows[(control, 160)]["verdict"] == "keeps"
    # where nothing was planted, the controls claim nothing: the small model does not use this context
    assert all(row["unplanted_claim"] != "effect" for key, row in rows.items() if key[0] != "intact")
    (horizon,) = report["copy_horizon"]
    assert horizon["distance"] == 96 and horizon["prefix_length"] == 192
    # the planted data runs on its own, as the task's data
    planted = [json.loads(line) for line in (out / "planted.jsonl").read_text().splitlines()]
    assert len(planted) == 15 and all(row["planted"]["distance"] == 96 for row in planted)
    markdown = (out / "calibration.md").read_text()
    assert "**detects**" in markdown and "copy horizon is at least 96 tokens" in markdown
    assert (out / "calibration.png").stat().st_size > 10_000
    # resumable: a second call redoes nothing and writes the same calibration
    again = CliRunner().invoke(app, command[3:])  # in this process: the command as a process ran above
    assert again.exit_code == 0 and json.loads((out / "calibration.json").read_text()) == report


def test_bad_settings_are_refused_before_the_model_loads(tmp_path: Path) -> None:
    """In this process (each refusal as a process costs an interpreter and torch's import)."""
    data = write_bundled(tmp_path / "cb.jsonl", per_book=1)
    base = [
        "calibrate",
        "chapterbreak",
        "--data",
        str(data),
        "--model",
        "smollm2",
        "--out",
        str(tmp_path / "out"),
    ]
    cases = {
        (
            "--prefix-lengths",
            "256",
            "--distances",
            "256",
            "--keep-last",
            "32,300",
        ): "at or beyond the prefix length",
        (
            "--prefix-lengths",
            "512",
            "--distances",
            "128",
            "--keep-last",
            "100,120",
        ): "does not bracket distance 128",
    }
    for extra, message in cases.items():
        done = CliRunner().invoke(app, [*base, *extra])
        said = unboxed(done.stderr)
        assert done.exit_code != 0 and message in said, said[-2000:]
        assert "Loading weights" not in done.output
    wrong_task = CliRunner().invoke(app, [base[0], "narrativexl", *base[2:]])
    said = unboxed(wrong_task.stderr)
    assert wrong_task.exit_code == 2 and "plants copies in chapterbreak data only" in said
