"""Bad input to `longread export`: a run directory, an unknown task or target, a non-empty folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from longread.cli.app import app
from longread.errors import BadInputError, LongreadError
from longread.export import ExportOptions, export_task

OPTIONS = ExportOptions("gpt2", (64,), 16)
runner = CliRunner()


def _export_args(data: Path, out: Path, *extra: str) -> list[str]:
    return ["export", "chapterbreak", "--data", str(data), "--to", "hf", "--out", str(out),
            "--prefix-lengths", "64", "--suffix-tokens", "16", *extra]  # fmt: skip


def test_a_run_directory_is_refused_with_what_to_export(chapterbreak_data: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    (run / "samples.jsonl").write_text("")
    with pytest.raises(BadInputError, match=r"is a run directory \(it holds config.json, samples.jsonl\)"):
        export_task("chapterbreak", run, "hf", tmp_path / "out", OPTIONS)
    result = runner.invoke(app, _export_args(run, tmp_path / "out"))
    assert result.exit_code == 2
    assert "export the data the run read" in result.output
    assert not (tmp_path / "out").exists()


def test_unknown_task_and_target(chapterbreak_data: Path, tmp_path: Path) -> None:
    with pytest.raises(LongreadError, match="cannot export task 'muld/summaries'"):
        export_task("muld/summaries", chapterbreak_data, "hf", tmp_path / "out", OPTIONS)
    with pytest.raises(LongreadError, match="unknown export target 'parquet'"):
        export_task("muld/vlsp", chapterbreak_data, "parquet", tmp_path / "out", OPTIONS)
    with pytest.raises(LongreadError, match="needs --max-length"):
        export_task("muld/vlsp", chapterbreak_data, "lm-eval", tmp_path / "out", OPTIONS)
    with pytest.raises(LongreadError, match="unknown export target 'csv' — use one of hf, lm-eval, inspect"):
        export_task("chapterbreak", chapterbreak_data, "csv", tmp_path / "out", OPTIONS)
    result = runner.invoke(app, ["export", "nosuchtask", "--data", str(chapterbreak_data)])
    assert result.exit_code == 2
    assert "No such command 'nosuchtask'" in result.output


def test_a_non_empty_folder_needs_overwrite(chapterbreak_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    result = runner.invoke(app, _export_args(chapterbreak_data, out))
    assert result.exit_code == 2
    assert "exists and is not empty" in result.output and "--overwrite" in result.output
    assert (out / "mine.txt").read_text() == "keep me"
    result = runner.invoke(app, _export_args(chapterbreak_data, out, "--overwrite"))
    assert result.exit_code == 0, result.output
    assert not (out / "mine.txt").exists()
    assert (out / "prefix_64" / "test-00000-of-00001.parquet").is_file()
    assert "prefix 64: 3 items" in result.output


def test_an_empty_folder_or_a_folder_of_jsonl_is_fine(chapterbreak_data: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(chapterbreak_data, data / "cb.jsonl")
    out = tmp_path / "out"
    out.mkdir()
    report = export_task("chapterbreak", data, "lm-eval", out, OPTIONS)
    assert report.facts.counts[64]["items"] == 3
    assert (out / "longread_chapterbreak_64.yaml").is_file()


def test_exported_folders_name_files_never_a_path_of_this_machine(
    chapterbreak_data: Path, tmp_path: Path
) -> None:
    """Cards, task files and manifests name the data by file name and sha256, and show the export command
    with every path cut to its name."""
    import hashlib
    import subprocess
    import sys

    for target in ("hf", "lm-eval", "inspect"):
        out = tmp_path / f"out-{target}"
        command = [sys.executable, "-m", "longread.cli", "export", "chapterbreak", "--data",
                   str(chapterbreak_data), "--to", target, "--out", str(out),
                   "--prefix-lengths", "64"]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        texts = {
            p: p.read_text(errors="replace")
            for p in out.rglob("*")
            if p.suffix in (".md", ".yaml", ".json", ".py")
        }
        assert texts, target
        leaks = [str(p.relative_to(out)) for p, text in texts.items() if str(tmp_path) in text]
        assert leaks == [], target
        sha = hashlib.sha256(chapterbreak_data.read_bytes()).hexdigest()
        assert any(chapterbreak_data.name in t and sha in t for t in texts.values()), target
