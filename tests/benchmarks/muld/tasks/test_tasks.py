"""MuLD's six tasks through the one runner, on real data where the project has it (VLSP theses, Gutenberg
style change) and on samples in each source's published format otherwise — with the real SmolLM2.

Every row carries the model's prediction and the references, and the corpus metrics recomputed from
``samples.jsonl`` equal the ones in ``results.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from longread.benchmarks.muld.builders.archetype import build_archetype
from longread.benchmarks.muld.builders.hotpotqa import build_hotpotqa
from longread.benchmarks.muld.builders.narrativeqa import build_narrativeqa, split_path
from longread.benchmarks.muld.builders.opensubtitles import build_opensubtitles
from longread.benchmarks.muld.builders.report import LengthFilter
from longread.benchmarks.muld.builders.style_change import build_style_change
from longread.benchmarks.muld.records import read_records
from longread.cli.app import app
from longread.evaluation import RunOptions, make_task, run_task
from longread.metrics.meteor import meteor
from longread.metrics.text_overlap import corpus_bleu, rouge_l
from longread.models.registry import load_backend
from tests.benchmarks.muld.builders.test_archetype import make_sources
from tests.benchmarks.muld.builders.test_hotpotqa import QUESTIONS, write_page_pool
from tests.benchmarks.muld.builders.test_narrativeqa import make_checkout
from tests.benchmarks.muld.builders.test_opensubtitles import ALIGNMENT, RAW
from tests.benchmarks.muld.builders.test_style_change import BOOKS
from tests.helpers import copy_theses, gutenberg_book, needs_shared
from tests.models_fixtures import backend

pytestmark = [needs_shared, pytest.mark.slow]
THESES = ("0704.2963v1", "0705.0587v1")
QUIET = RunOptions(show_progress=False)


def _rows(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]


def _results(run: Path) -> dict[str, Any]:
    return json.loads((run / "results.json").read_text())  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def vlsp_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two real theses built by the CLI, plus three bad lines appended (no input, no reference, not UTF-8)."""
    root = tmp_path_factory.mktemp("vlsp")
    source = copy_theses(root / "src", THESES)
    out = root / "vlsp_test.jsonl"
    result = CliRunner().invoke(app, ["build", "muld/vlsp", "--source", str(source), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "kept 2, dropped 0" in result.output
    with out.open("ab") as handle:
        handle.write(b'{"output": ["no input here"]}\n')
        handle.write(b'{"input": "a paper", "output": []}\n')
        handle.write('{"input": "caf\xe9", "output": ["x"]}\n'.encode("latin-1"))
    return out


def test_vlsp_eval_from_the_command_line_reports_every_metric_with_intervals(
    vlsp_data: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "eval", "muld/vlsp", "--data", str(vlsp_data), "--model", "smollm2", "--out", str(run),
            "-o", "mode=first", "-o", "first_tokens=256", "-o", "summary_tokens=24", "--quiet",
            "--threads", "1",
        ],
    )  # fmt: skip
    # The three bad lines are named at the end and make the exit code 1; the two theses are scored.
    assert result.exit_code == 1, result.output
    assert "3 item(s) of the data could not be read" in result.output
    assert f"{vlsp_data}, line 3: no 'input' field" in result.output
    assert f"{vlsp_data}, line 4: empty reference list" in result.output
    assert f"{vlsp_data}, line 5: not UTF-8" in result.output
    results = _results(run)
    assert len(results["input_problems"]) == 3
    rows = _rows(run)
    assert sorted(row["id"] for row in rows) == list(THESES)
    for row in rows:
        assert row["prediction"].strip() and len(row["references"]) == 2
        assert row["sections_used"][0]["tokens_read"] == 256
    overall = results["overall"]["metrics"]
    for name in ("rouge_l", "bleu1", "bleu4", "meteor", "token_f1"):
        assert overall[name]["ci_low"] is not None and overall[name]["ci_high"] is not None, name
        assert overall[name]["ci_low"] <= overall[name]["value"] <= overall[name]["ci_high"], name
    assert set(results["by_x"]) == {"15–20K", "20–30K"}  # the length curve: one bucket per thesis here
    # Anyone can recompute the metrics from samples.jsonl alone.
    predictions = [row["prediction"] for row in sorted(rows, key=lambda r: r["key"])]
    references = [row["references"] for row in sorted(rows, key=lambda r: r["key"])]
    assert overall["bleu4"]["value"] == pytest.approx(corpus_bleu(predictions, references), abs=1e-9)
    assert overall["bleu1"]["value"] == pytest.approx(corpus_bleu(predictions, references, 1), abs=1e-9)
    mean_rouge = sum(rouge_l(p, r) for p, r in zip(predictions, references, strict=True)) / 2
    assert overall["rouge_l"]["value"] == pytest.approx(mean_rouge)
    mean_meteor = sum(meteor(p, r) for p, r in zip(predictions, references, strict=True)) / 2
    assert overall["meteor"]["value"] == pytest.approx(mean_meteor)
    report = (run / "report.md").read_text()
    assert "meteor" in report and "bleu4" in report
    assert (run / "memory_curve.png").stat().st_size > 10_000


def test_vlsp_by_sections_summarises_each_kept_section_and_records_the_rest(
    vlsp_data: Path, tmp_path: Path
) -> None:
    task = make_task(
        "muld/vlsp", {"max_sections": "2", "section_tokens": "96", "section_summary_tokens": "8"}
    )
    outcome = run_task(
        task, vlsp_data, backend("smollm2"), tmp_path / "run", RunOptions(limit=1, show_progress=False)
    )
    assert outcome.scored == 1 and not outcome.errors
    (row,) = _rows(tmp_path / "run")
    assert row["mode"] == "sections"
    assert [part["title"] for part in row["sections_used"]] == ["Chapter 1 Introduction", "Chapter 2 Basics"]
    assert all(part["tokens_read"] == 96 < part["tokens"] for part in row["sections_used"])
    assert row["sections_left_over"] == 2  # 4 chapters found, 2 summarised, 2 recorded as left over
    assert row["prediction"] == " ".join(part["summary"] for part in row["sections_used"] if part["summary"])


def test_style_change_with_the_stylometric_pair_classifier(tmp_path: Path) -> None:
    built = build_style_change(
        [gutenberg_book(n) for n in BOOKS],
        tmp_path / "sc",
        length_filter=LengthFilter(min_tokens=1_500),
        seed=1,
        documents={"train": 2, "validation": 1, "test": 4},
        test_fraction=0.25,
    )
    test_file = (
        built.files["test"] if hasattr(built, "files") else tmp_path / "sc" / "style_change_test.jsonl.bz2"
    )
    records = read_records(test_file).records
    assert len(records) == 4
    # A truth that does not fit its text: the sample is an error named by id, the others are scored.
    broken = tmp_path / "with_bad_truth.jsonl"
    lines = [json.dumps(record.as_json(), ensure_ascii=False) for _, record in records]
    bad = records[0][1].as_json()
    bad["input"] = bad["input"] + "\nOne more paragraph that the truth does not know about at all, none."
    bad["metadata"] = json.dumps({"id": "bad-truth"})
    broken.write_text("\n".join([*lines, json.dumps(bad)]) + "\n")
    task = make_task("muld/style-change")
    outcome = run_task(task, broken, load_backend("style:stylometric"), tmp_path / "run", QUIET)
    assert outcome.scored == 4
    assert [key for key, _ in outcome.errors] == ["bad-truth"]
    assert "changes must be paragraphs − 1" in outcome.errors[0][1]
    assert f"{broken}, line 5: PAN truth has" in outcome.errors[0][1]
    results = _results(tmp_path / "run")
    pan = results["overall"]["metrics"]["pan_f1"]
    assert 0.0 <= pan["ci_low"] <= pan["value"] <= pan["ci_high"] <= 1.0
    for row in _rows(tmp_path / "run"):
        assert len(row["prediction"]) == len(row["changes"]) == row["paragraphs"] - 1
        assert row["prediction"] == [int(p < row["threshold"]) for p in row["same_author"]]


@pytest.fixture(scope="module")
def hotpot_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hotpot")
    pool = write_page_pool(root / "pages.jsonl")
    out = root / "hotpotqa.jsonl.bz2"
    build_hotpotqa(QUESTIONS, pool, out, seed=7, length_filter=LengthFilter(min_tokens=7_500))
    return out


def test_hotpotqa_answers_from_retrieved_chunks_and_places_the_evidence(
    hotpot_data: Path, tmp_path: Path
) -> None:
    task = make_task("muld/hotpotqa", {"chunk_tokens": "128", "top_k": "2", "answer_tokens": "8"})
    outcome = run_task(task, hotpot_data, backend("smollm2"), tmp_path / "run", QUIET)
    assert outcome.scored >= 2 and not outcome.errors and not outcome.input_problems
    for row in _rows(tmp_path / "run"):
        assert row["question"] and row["references"]
        assert row["evidence_rule"] in ("supporting-facts", "supporting-pages")
        assert 0.0 < row["evidence_position"] <= 1.0 and isinstance(row["evidence_read"], bool)
        kept = row["kept"]["kept"]
        assert len(kept) == 2 and kept[0]["start"] < kept[1]["start"]  # document order
        assert row["document_tokens_read"] == row["document_tokens_original"]  # two chunks fit the window
    runner = CliRunner().invoke(app, ["report", str(tmp_path / "run"), "--out", str(tmp_path / "rep"),
                                      "--group-by", "evidence_bucket"])  # fmt: skip
    assert runner.exit_code == 0, runner.output
    assert list((tmp_path / "rep").glob("memory_curve_by_evidence_bucket.png"))


def test_narrativeqa_question_told_from_story_and_two_references(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "nqa")
    out = tmp_path / "narrativeqa.jsonl.bz2"
    build_narrativeqa(checkout, out)
    data = split_path(out, "test") if split_path(out, "test").exists() else split_path(out, "train")
    task = make_task("muld/narrativeqa", {"retriever": "tfidf", "chunk_tokens": "128", "top_k": "2",
                                          "answer_tokens": "6"})  # fmt: skip
    outcome = run_task(
        task, data, backend("smollm2"), tmp_path / "run", RunOptions(limit=2, show_progress=False)
    )
    assert outcome.scored == 2 and not outcome.errors
    results = _results(tmp_path / "run")
    assert (
        results["notes"]["question_split"].removeprefix("question told from document by: metadata ").isdigit()
    )
    for row in _rows(tmp_path / "run"):
        assert len(row["references"]) == 2 and row["question"].endswith("?")


def test_character_archetype_by_log_likelihood_from_the_mention_chunks(tmp_path: Path) -> None:
    scripts, labels = make_sources(tmp_path / "sources")
    out = tmp_path / "character_id.jsonl"
    build_archetype(scripts, labels, out)
    task = make_task("muld/character-archetype", {"chunk_tokens": "128"})
    outcome = run_task(task, out, backend("smollm2"), tmp_path / "run", QUIET)
    assert outcome.scored >= 1 and not outcome.errors
    results = _results(tmp_path / "run")
    assert "macro_f1" in results["overall"]["metrics"] and results["chance"] == 0.5
    for row in _rows(tmp_path / "run"):
        assert row["prediction"] in ("Hero", "Villain", "tie") and row["truth"] in ("Hero", "Villain")
        assert row["correct"] == (row["prediction"] == row["truth"])
        assert len(row["logprobs"]) == 2 and row["mentions"] > 0
        assert {span["label"] for span in row["kept"]["kept"]} <= {
            "first", "last", "most-mentions", "first+most-mentions", "first+last", "last+most-mentions",
            "first+last+most-mentions",
        }  # fmt: skip


def test_opensubtitles_translated_chunk_by_chunk_keeps_the_line_structure(tmp_path: Path) -> None:
    out = tmp_path / "opensubtitles.jsonl"
    build_opensubtitles(ALIGNMENT, RAW, out, length_filter=LengthFilter(min_tokens=20))
    task = make_task("muld/opensubtitles", {"chunk_tokens": "24"})
    outcome = run_task(task, out, backend("smollm2"), tmp_path / "run", QUIET)
    assert outcome.scored == 1 and not outcome.errors
    (row,) = _rows(tmp_path / "run")
    source_lines = read_records(out).records[0][1].input.split("\n")
    assert len(row["prediction"].split("\n")) == len(source_lines)
    assert row["chunks"] >= 2 and row["scored_by"] == "line pairs" and row["line_pairs"] == len(source_lines)
    assert len(row["kept"]["kept"]) == row["chunks"]
    assert all(m["rule"] in ("merged", "split", "padded", "empty") for m in row["line_mismatches"])
