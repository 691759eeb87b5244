"""Every task whose requests carry a document runs under a context control (SmolLM2, local): NarrativeXL
read-along (its windows read again per question) and scene summaries, MuLD character archetype
(log-likelihood) and VLSP (generation from a document prompt). The rows keep the intact keys, say what
was perturbed, and a control that keeps everything gives the intact log-probs to the bit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from longread.benchmarks.muld.builders.archetype import build_archetype
from longread.benchmarks.muld.builders.vlsp import build_vlsp
from longread.evaluation import RunOptions, make_task, run_task
from longread.evaluation.controls import ControlledTask, ControlSettings
from longread.report.build import build_report
from longread.report.context_use import write_context_use
from tests.benchmarks.muld.builders.test_archetype import make_sources
from tests.benchmarks.narrativexl.test_task import _books, _summaries_book
from tests.helpers import copy_theses, needs_shared
from tests.models_fixtures import backend

QUIET = RunOptions(show_progress=False)
pytestmark = needs_shared


def _rows(run: Path) -> dict[str, dict[str, Any]]:
    rows = (json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines())
    return {row["key"]: row for row in rows}


def _runs(
    task: str, settings: dict[str, str], data: Path, out: Path, *controls: ControlSettings
) -> list[dict[str, dict[str, Any]]]:
    runs = []
    for index, control in enumerate((None, *controls)):
        chosen: Any = make_task(task, settings)
        if control is not None:  # an intact control wraps only a read-along (cut-left, as the controls)
            chosen = ControlledTask(chosen, control)
        outcome = run_task(chosen, data, backend("smollm2"), out / str(index), QUIET)
        assert not outcome.errors, outcome.errors
        runs.append(_rows(out / str(index)))
    assert all(sorted(run) == sorted(runs[0]) for run in runs) and runs[0]
    return runs


def test_a_read_along_run_is_controlled_as_it_is_read(tmp_path: Path) -> None:
    """The intact baseline of a controlled read-along is the same cut-left reading (``ablate`` makes it):
    a control whose K is the window gives its log-probs to the bit (replace: the kind that brings in
    tokens of its own; every kind's K at or above the whole text: ``test_controls.py``); K below it
    (shuffle 0, replace 32) changes them, and replace lends another book's tokens; a read-along run
    (sliding cache) is never paired with a cut-left one."""
    from longread.report.load import load_runs
    from longread.report.paired import MixedReading, paired_differences

    data = tmp_path / "build"
    (data / "readalong").mkdir(parents=True)
    for book in _books():
        (data / "readalong" / f"{book.book_id}.json").write_text(book.model_dump_json(), encoding="utf-8")
    settings = {"window": "256"}
    plans = [ControlSettings("intact")]
    plans += [ControlSettings("replace", 256)]
    plans += [ControlSettings("shuffle", 0), ControlSettings("replace", 32)]
    runs = _runs("narrativexl", settings, data, tmp_path, *plans)
    read_along, cut_left, *controlled = runs
    assert {row["policy"].split("(")[0] for row in read_along.values()} == {"sliding"}
    assert {row["policy"] for row in cut_left.values()} == {"cut-left(window=256)"}
    assert all(
        row["context_control"] == "intact" and row["tokens_perturbed"] == 0 for row in cut_left.values()
    )
    assert any(row["window_start"] > 0 for row in cut_left.values())  # the window did cut some books
    for plan, rows in zip(plans[1:], controlled, strict=True):
        same = all(rows[key]["option_logprobs"] == cut_left[key]["option_logprobs"] for key in cut_left)
        if plan.keep_last >= 256:
            assert same, plan  # to the bit
            assert all(row["tokens_perturbed"] == 0 for row in rows.values())
        else:
            assert not same and any(row["tokens_perturbed"] > 0 for row in rows.values()), plan
    replaced = controlled[-1]
    for row in replaced.values():
        if row["tokens_perturbed"]:
            (donor,) = row["donors"]
            assert donor != row["book_id"]
    # the read-along run differs from the cut-left one by its reading alone, and is not paired with it
    assert any(read_along[k]["option_logprobs"] != cut_left[k]["option_logprobs"] for k in cut_left)
    with pytest.raises(MixedReading, match=r"read by sliding .* by cut-left: their difference would mix"):
        paired_differences(load_runs([tmp_path / "0", tmp_path / "2"]), ())
    same_reading = paired_differences(load_runs([tmp_path / "1", tmp_path / "2"]), ())
    assert sum(d.paired for d in same_reading) == len(cut_left)


def test_narrativexl_summaries_shuffled_and_a_no_op_to_the_bit(tmp_path: Path) -> None:
    data = tmp_path / "pride.json"
    data.write_text(_summaries_book().model_dump_json(), encoding="utf-8")
    controls = (ControlSettings("shuffle", 0), ControlSettings("none", 100_000))
    intact, shuffled, kept = _runs("narrativexl-summaries", {}, data, tmp_path, *controls)
    for key, row in intact.items():
        assert shuffled[key]["tokens_perturbed"] > 0 and shuffled[key]["logprobs"] != row["logprobs"]
        assert kept[key]["tokens_perturbed"] == 0 and kept[key]["logprobs"] == row["logprobs"]
    # the context-use report on accuracy and on the margin, per x and pooled over every x
    md, js, _ = write_context_use(tmp_path / "0", [tmp_path / "1"], tmp_path / "use", ("accuracy", "margin"))
    report = json.loads(js.read_text())["rows"]
    xs = [str(x) for x in sorted({row["candidates"] for row in intact.values()})]
    shown = [*xs, "all"] if len(xs) > 1 else xs
    assert {(r["metric"], str(r["x"])) for r in report} == {
        (m, x) for m in ("accuracy", "margin") for x in shown
    }
    (pooled,) = [r for r in report if r["metric"] == "margin" and str(r["x"]) == shown[-1]]
    by_hand = [_margin(shuffled[key]) - _margin(row) for key, row in intact.items()]
    assert pooled["paired"] == len(intact)
    assert pooled["difference"] == pytest.approx(sum(by_hand) / len(by_hand), abs=1e-9)
    assert "Margin, " in md.read_text() and pooled["mcnemar_p"] is None and pooled["p"] is not None


def _margin(row: dict[str, Any]) -> float:
    means = [lp / n for lp, n in zip(row["logprobs"], row["n_tokens"], strict=True)]
    return means[0] - max(means[1:])


def test_muld_archetype_and_vlsp_under_a_control(tmp_path: Path) -> None:
    scripts, labels = make_sources(tmp_path / "sources")
    archetype = tmp_path / "character_id.jsonl"
    build_archetype(scripts, labels, archetype)
    controls = (ControlSettings("none", 16), ControlSettings("shuffle", 10**6))
    settings = {"chunk_tokens": "128"}
    intact, dropped, kept = _runs("muld/character-archetype", settings, archetype, tmp_path / "a", *controls)
    for key, row in intact.items():
        assert dropped[key]["tokens_perturbed"] > 0 and kept[key]["logprobs"] == row["logprobs"]
    # macro F1 is corpus-level: the paired report computes it again on each resample of instances
    report = build_report([tmp_path / "a" / "0", tmp_path / "a" / "1"], tmp_path / "a" / "report")
    (paired,) = report.paired
    results = json.loads((tmp_path / "a" / "0" / "results.json").read_text())
    assert paired.metric == "macro_f1" and paired.paired == len(intact)
    assert paired.value_first == pytest.approx(results["overall"]["metrics"]["macro_f1"]["value"])
    assert paired.ci_low <= paired.difference <= paired.ci_high and paired.mcnemar_p is None
    source = copy_theses(tmp_path / "src", ["0704.2963v1", "0705.0587v1"])
    vlsp = tmp_path / "vlsp.jsonl"
    build_vlsp([source], vlsp)
    settings = {"mode": "first", "summary_tokens": "8", "first_tokens": "256"}
    plain, shuffled = _runs("muld/vlsp", settings, vlsp, tmp_path / "v", ControlSettings("shuffle", 64))
    for key, row in shuffled.items():
        assert row["tokens_perturbed"] == 256 - 64 and row["context_control"] == "shuffle", key
        assert row["read_sha256"] and plain[key].get("read_sha256") is None
