"""ChapterBreak evaluation end to end: rows, results, resume after a real kill, faults."""

from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.io import write_instances
from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.cli.app import app
from longread.evaluation import RunOptions, run_task
from longread.models import load_backend
from longread.runs.errors import RunWriteError
from tests.helpers import kill_after_rows, start_paused, synthetic_book

TINY = "random:gpt2"
# Many lengths make the killed run long enough (48 samples) for the kill to land mid-way.
LENGTHS = "32,48,64,80,96,112,128,144"
runner = CliRunner()
QUIET = RunOptions(show_progress=False)


@pytest.fixture(scope="module")
def data_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cb")
    instances = []
    for name in ("a", "b"):
        instances += build_book(
            synthetic_book(9, book_id=name), BuildOptions(prefix_tokens=300, suffix_tokens=24)
        ).instances
    path = folder / "cb.jsonl"
    write_instances(instances, path)
    return path


def test_rows_and_results(data_file: Path, tmp_path: Path) -> None:
    backend = load_backend(TINY)
    settings = ChapterBreakSettings(prefix_lengths=(64, 128, 4096), suffix_tokens=16)
    outcome = run_task(ChapterBreakTask(settings), data_file, backend, tmp_path / "run", QUIET)
    rows = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 6 * 3  # 3 instances per book × 2 books × 3 lengths
    for row in rows:
        assert len(row["logprobs"]) == 6
        assert row["context_tokens_kept"] <= row["prefix_length"]
        assert all(n <= 16 for n in row["continuation_tokens"])
        assert row["correct"] == (row["prediction"] == 0 and not row["tie"])
    long_rows = [row for row in rows if row["prefix_length"] == 4096]
    # the whole prefix fits: the 4096 sample reuses the 128 one only if that held the whole prefix
    assert all(not row["context_truncated"] for row in long_rows)
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert set(results["by_x"]) == {"64", "128", "4096"}
    assert results["by_x"]["64"]["extras"]["truncated_prefix"] == 6
    assert results["chance"] == pytest.approx(1 / 6)
    assert outcome.scored + outcome.reused == 18


def _eval_command(data: Path, run: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "longread.cli", "eval", "chapterbreak", "--data", str(data), "--model", TINY,
        "--out", str(run), "--prefix-lengths", LENGTHS, "--suffix-tokens", "16", "--quiet", *extra,
    ]  # fmt: skip


def test_killed_run_resumes_to_the_same_results(data_file: Path, tmp_path: Path) -> None:
    whole = tmp_path / "whole"  # the uninterrupted run and the resume in this process; the killed one is one
    assert CliRunner().invoke(app, _eval_command(data_file, whole)[3:]).exit_code == 0
    killed = tmp_path / "killed"
    marker = tmp_path / "paused"
    process = start_paused(_eval_command(data_file, killed), 4, marker)
    samples = killed / "samples.jsonl"
    kept = kill_after_rows(process, samples, marker)
    assert kept == 4, "the kill lands after the fourth row"
    assert not (killed / "results.json").exists()
    resumed = CliRunner().invoke(app, _eval_command(data_file, killed, "--resume")[3:])
    assert resumed.exit_code == 0, resumed.output
    assert "samples already done" in resumed.output
    assert (killed / "results.json").read_bytes() == (whole / "results.json").read_bytes()
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    assert len({row["key"] for row in rows}) == 48


def test_disk_full_keeps_finished_samples(
    data_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = load_backend(TINY)
    run = tmp_path / "run"
    real_write = os.write
    calls = {"n": 0}

    def filling_write(fd: int, data: bytes) -> int:
        if data.startswith(b'{"') and b'"logprobs"' in data:
            calls["n"] += 1
            if calls["n"] > 3:
                raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", filling_write)
    with pytest.raises(RunWriteError, match="disk full") as info:
        settings = ChapterBreakSettings(prefix_lengths=(64,), suffix_tokens=16)
        run_task(ChapterBreakTask(settings), data_file, backend, run, QUIET)
    monkeypatch.undo()
    assert "--resume" in str(info.value)
    assert len((run / "samples.jsonl").read_text().splitlines()) == 3


def test_bad_model_spec_and_bad_data_are_clear(data_file: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "eval",
            "chapterbreak",
            "--data",
            str(data_file),
            "--model",
            "nosuch:thing",
            "--out",
            str(tmp_path / "r"),
        ],
    )
    assert result.exit_code == 2
    assert "unknown model spec 'nosuch:thing'" in result.output
    missing = runner.invoke(
        app,
        [
            "eval",
            "chapterbreak",
            "--data",
            str(data_file),
            "--model",
            "hf:/no/such/folder",
            "--out",
            str(tmp_path / "r"),
        ],
    )
    assert missing.exit_code == 2
    assert "/no/such/folder" in missing.output
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text('{"question": "?"}\n')
    result = runner.invoke(
        app, ["eval", "chapterbreak", "--data", str(wrong), "--model", TINY, "--out", str(tmp_path / "r2")]
    )
    assert result.exit_code == 2
    assert "wrong.jsonl, line 1: not a ChapterBreak instance" in result.output


def test_prompt_longer_than_the_window_without_truncation_fails_per_sample(
    data_file: Path, tmp_path: Path
) -> None:
    backend = load_backend(TINY, max_length=64)
    settings = ChapterBreakSettings(prefix_lengths=(128,), suffix_tokens=16, truncate=False)
    outcome = run_task(ChapterBreakTask(settings), data_file, backend, tmp_path / "run", QUIET)
    assert len(outcome.errors) == 6
    assert all("ContextTooLong" in message for _, message in outcome.errors)
    errors = (tmp_path / "run" / "errors.jsonl").read_text()
    assert "ContextTooLong" in errors
