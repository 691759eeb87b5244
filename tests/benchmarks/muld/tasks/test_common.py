"""The ``whole`` strategy every MuLD task shares: the document cut to the model's window from the task's
side, the question or instruction never cut, the tokens cut recorded per row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from longread.benchmarks.muld.builders.archetype import build_archetype
from longread.benchmarks.muld.builders.vlsp import build_vlsp
from longread.benchmarks.muld.tasks.archetype import LABELS
from longread.evaluation import RunOptions, make_task, run_task
from longread.evaluation.registry import TaskOptionError
from tests.benchmarks.muld.builders.test_archetype import make_sources
from tests.helpers import copy_theses, needs_shared
from tests.models_fixtures import tuned

pytestmark = [needs_shared]
WINDOW = 512
"""SmolLM2's window forced down from 8,192, so every document here is cut."""
QUIET = RunOptions(show_progress=False, limit=1)


def _rows(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]


def test_vlsp_whole_paper_is_cut_from_its_end_to_the_window_and_the_instruction_kept(tmp_path: Path) -> None:
    data = tmp_path / "vlsp.jsonl"
    build_vlsp([copy_theses(tmp_path / "src", ("0704.2963v1",))], data)
    model = tuned("smollm2", max_length=WINDOW)
    task = make_task("muld/vlsp", {"strategy": "whole", "summary_tokens": "12"})
    outcome = run_task(task, data, model, tmp_path / "run", QUIET)
    assert outcome.scored == 1 and not outcome.errors
    (row,) = _rows(tmp_path / "run")
    instruction = len(model.tokenizer("\n\nAbstract:", add_special_tokens=False)["input_ids"])
    kept = WINDOW - 12 - instruction  # the window less the answer's room and the never-cut instruction
    (part,) = row["sections_used"]
    assert (row["strategy"], row["cut_side"], row["mode"]) == ("whole", "right", "whole")
    assert row["document_tokens_read"] == part["tokens_read"] == kept
    assert row["document_tokens_cut"] == part["tokens"] - kept > 10_000
    notes = json.loads((tmp_path / "run" / "results.json").read_text())["notes"]
    assert "whole" in notes["strategy"] and "right" in notes["strategy"]


def test_archetype_whole_script_by_log_likelihood_loses_its_start_only(tmp_path: Path) -> None:
    scripts, labels = make_sources(tmp_path / "sources")
    data = tmp_path / "character_id.jsonl"
    build_archetype(scripts, labels, data)
    model = tuned("smollm2", max_length=WINDOW)
    run_task(
        make_task("muld/character-archetype", {"strategy": "whole"}), data, model, tmp_path / "run", QUIET
    )
    (row,) = _rows(tmp_path / "run")
    assert (row["strategy"], row["cut_side"]) == ("whole", "left")
    assert row["document_tokens_cut"] == row["context_tokens_original"] - row["context_tokens_kept"] > 0
    longest = max(
        len(model.tokenizer(f" {label}", add_special_tokens=False)["input_ids"]) for label in LABELS
    )
    assert row["context_tokens_kept"] == WINDOW + 1 - longest  # the window less the longest label's room
    assert row["prediction"] in ("Hero", "Villain", "tie")


def test_the_chunking_baseline_stays_the_default_and_records_no_cut() -> None:
    task = make_task("muld/vlsp", {})
    assert task.settings.strategy == "chunks"  # type: ignore[attr-defined]


def test_style_change_refuses_the_whole_strategy_and_says_why() -> None:
    with pytest.raises(TaskOptionError, match="reads no window"):
        make_task("muld/style-change", {"strategy": "whole"})
