"""`-o KEY=VALUE` on the ChapterBreak and NarrativeXL-summaries exports: the items follow the task's settings.

ChapterBreak: ``-o prefix_lengths=… -o suffix_tokens=…`` (pasted from a ``longread eval`` command) give the
very files the flags give; the same setting given twice with different values, or a setting the task does
not have, is refused. NarrativeXL summaries: a prompt of the user's, a scene budget
(``max_scene_tokens``) and the options-only baseline give the contexts longread itself scores — each item's
context has exactly the tokens longread's own run kept (SmolLM2, real scenes of Frankenstein).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from longread.benchmarks.narrativexl.summaries_task import SummariesTask
from longread.cli.app import app
from longread.evaluation import RunOptions, run_task
from longread.evaluation.registry import make_task
from longread.export import ExportOptions, export_task
from longread.export.hf import read_hf_items
from tests.benchmarks.narrativexl.books import make_book
from tests.models_fixtures import backend

runner = CliRunner()


def _chapterbreak(data: Path, out: Path, *extra: str) -> Any:
    args = ["export", "chapterbreak", "--data", str(data), "--to", "hf", "--out", str(out), *extra]
    return runner.invoke(app, args)


def test_chapterbreak_settings_as_o_give_the_files_the_flags_give(
    chapterbreak_data: Path, tmp_path: Path
) -> None:
    by_flags = _chapterbreak(
        chapterbreak_data, tmp_path / "flags", "--prefix-lengths", "64", "--suffix-tokens", "16"
    )
    assert by_flags.exit_code == 0, by_flags.output
    by_o = _chapterbreak(
        chapterbreak_data, tmp_path / "o", "-o", "prefix_lengths=64", "-o", "suffix_tokens=16"
    )
    assert by_o.exit_code == 0, by_o.output
    items = (tmp_path / "o" / "prefix_64" / "test-00000-of-00001.parquet").read_bytes()
    assert items == (tmp_path / "flags" / "prefix_64" / "test-00000-of-00001.parquet").read_bytes()
    assert read_hf_items(tmp_path / "o", 64)[0]["choice_tokens"] == [16] * 6
    manifest = json.loads((tmp_path / "o" / "longread_export.json").read_text())
    assert manifest["task_settings"] == {"prefix_lengths": "64", "suffix_tokens": "16"}
    assert manifest["suffix_tokens"] == 16 and manifest["prefix_lengths"] == [64]
    assert "`prefix_lengths=64`, `suffix_tokens=16`" in (tmp_path / "o" / "README.md").read_text()


def test_chapterbreak_conflicting_or_unknown_settings_are_refused(
    chapterbreak_data: Path, tmp_path: Path
) -> None:
    twice = _chapterbreak(
        chapterbreak_data, tmp_path / "a", "--suffix-tokens", "32", "-o", "suffix_tokens=16"
    )
    assert twice.exit_code == 2
    assert "suffix_tokens is given twice with different values" in twice.output
    assert not (tmp_path / "a").exists()
    agreeing = _chapterbreak(
        chapterbreak_data, tmp_path / "b", "--prefix-lengths", "64", "-o", "prefix_lengths=64"
    )
    assert agreeing.exit_code == 0, agreeing.output
    unknown = _chapterbreak(chapterbreak_data, tmp_path / "c", "-o", "window=4")
    assert unknown.exit_code == 2
    assert (
        "task 'chapterbreak' has no setting 'window'" in unknown.output and "suffix_tokens" in unknown.output
    )


def _longread_rows(data: Path, settings: dict[str, str], run: Path) -> dict[str, dict[str, Any]]:
    task = make_task("narrativexl-summaries", settings)
    assert isinstance(task, SummariesTask)
    run_task(task, data, backend("smollm2"), run, RunOptions(show_progress=False))
    rows = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    return {row["id"]: row for row in rows}


@pytest.mark.parametrize(
    "settings",
    [
        {"prompt": "\n\nIn short:", "max_scene_tokens": "40"},
        {"options_only": "true"},
    ],
    ids=["prompt-and-scene-budget", "options-only"],
)
def test_summaries_items_have_the_context_longread_scores(tmp_path: Path, settings: dict[str, str]) -> None:
    data = tmp_path / "frankenstein.json"
    data.write_text(make_book(84, 2).model_dump_json(), encoding="utf-8")
    options = ExportOptions("smollm2", (64, 1024), settings=tuple(settings.items()))
    report = export_task("narrativexl-summaries", data, "hf", tmp_path / "hf", options)
    assert report.facts.export.settings == settings
    ours = _longread_rows(data, settings, tmp_path / "run")
    prompt = settings.get("prompt", "\n\nA summary of the scene above:")
    for length in (64, 1024):
        items = read_hf_items(tmp_path / "hf", length)
        assert sorted(item["id"] for item in items) == sorted(ours)
        for item in items:
            row = ours[item["id"]]
            assert item["context"].endswith(prompt.lstrip() if "options_only" in settings else prompt)
            if "options_only" in settings:
                assert item["context"] == prompt.lstrip()
            kept = min(row["context_tokens_kept"], length)
            assert item["context_tokens"] == kept, (item["id"], length)
            assert item["choice_tokens"][-1] == row["n_tokens"][0]
