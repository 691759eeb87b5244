"""KV-cache presses (kvpress, in the presses' environment) on both shipped families: ``:0`` is the full
cache, a press changes scores and keeps what it says, sliding-window layers are never pressed, every
refusal comes before the model loads, resume refuses another press, and ``longread presses`` pairs every
press × ratio with the full cache in a table, a plot and a JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from longread.benchmarks.muld.builders.vlsp import build_vlsp
from longread.cli.app import app
from longread.models.tolerance import summed_logprob_tolerance
from longread.report.load import load_runs
from tests.benchmarks.narrativexl.test_task import _summaries_book
from tests.calibration.data import write_bundled
from tests.helpers import copy_theses, needs_shared
from tests.presses import converted, longread_in_presses, stop_presses_server

pytestmark = [needs_shared, pytest.mark.external]
SMALL = ["--prefix-lengths", "256", "--limit", "5", "-o", "suffix_tokens=32", "--quiet"]


def _rows(run: Path) -> dict[str, dict[str, Any]]:
    rows = (json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines())
    return {row["key"]: row for row in rows}


@pytest.fixture(scope="module", autouse=True)
def _fork_server_stopped_at_the_end() -> Iterator[None]:
    yield
    stop_presses_server()


@pytest.fixture(scope="module")
def chapterbreak(tmp_path_factory: pytest.TempPathFactory) -> Path:
    converted()
    return write_bundled(tmp_path_factory.mktemp("presses") / "cb.jsonl", per_book=1)


def test_presses_are_listed_and_a_read_along_or_the_project_venv_is_refused_before_loading(
    chapterbreak: Path, tmp_path: Path
) -> None:
    listed = longread_in_presses("presses", "--list")
    assert listed.returncode == 0, listed.stderr[-2000:]
    for name in ("snapkv", "knorm", "streaming_llm", "expected_attention", "tova", "pyramidkv"):
        assert f"  {name} " in listed.stdout
    base = ["eval", "chapterbreak", "--data", str(chapterbreak), "--out", str(tmp_path / "run")]
    read_along = longread_in_presses("eval", "narrativexl", "--data", str(tmp_path), "--model", "smollm2",
                                     "--out", str(tmp_path / "nxl"), "--press", "snapkv:0.5")  # fmt: skip
    assert read_along.returncode != 0 and "kvpress" in read_along.stderr and "summaries" in read_along.stderr
    assert (
        "Loading weights" not in read_along.stderr
    )  # names and other refusals: tests/models/test_press_spec.py
    # the project's own environment has no kvpress: it says where presses run
    here = CliRunner().invoke(app, [*base, "--model", "smollm2", "--press", "snapkv:0.5"])  # this process
    assert here.exit_code != 0 and "make presses" in " ".join(here.output.split())


def _presses(data: Path, out: Path, model: str, presses: str, ratios: str, *extra: str) -> dict[str, Any]:
    done = longread_in_presses("presses", "chapterbreak", "--data", str(data), "--model", model, "--out",
                               str(out), "--presses", presses, "--ratios", ratios, *extra)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "KV-cache presses against the full cache" in done.stdout
    assert (out / "presses.png").stat().st_size > 10_000
    return dict(json.loads((out / "presses.json").read_text()))


def test_smollm2_press_zero_is_the_full_cache_to_the_bit_and_snapkv_keeps_half(
    chapterbreak: Path, tmp_path: Path
) -> None:
    report = _presses(chapterbreak, tmp_path, "smollm2", "snapkv", "0,0.5", *SMALL, "--distances", "128")
    full, zero, half = (_rows(tmp_path / name) for name in ("full", "snapkv-0", "snapkv-0.5"))
    assert sorted(full) == sorted(zero) == sorted(half) and len(full) == 5
    for key, row in full.items():
        # the context (255 tokens before its last) is read in one forward either way: the same arithmetic
        assert zero[key]["logprobs"] == row["logprobs"] and "press" not in row
        assert half[key]["logprobs"] != row["logprobs"]
        assert half[key]["press"] == "snapkv" and half[key]["compression_ratio"] == 0.5
        assert half[key]["context_tokens_pressed"] == 255 and half[key]["kept_cache_tokens"] == 127
        assert half[key]["kept_cache_per_layer"] == [127] * 30 and half[key]["pressed_layers"] == list(
            range(30)
        )
    rows = {(row["press"], row["ratio"]): row for row in report["rows"]}
    assert rows[("snapkv", 0.0)]["difference"] == 0 and rows[("snapkv", 0.0)]["claim"] == "null"
    assert rows[("snapkv", 0.5)]["paired"] == 5 and rows[("snapkv", 0.5)]["kept_cache_mb"] < (
        rows[("snapkv", 0.5)]["full_cache_mb"] / 1.9
    )
    assert all(run["cost"]["peak_rss_mb"] > 100 for run in report["runs"])
    # each setting starts after the memory earlier ones freed is handed back; later peaks are bounds
    assert all(100 < run["cost"]["start_rss_mb"] <= run["cost"]["peak_rss_mb"] for run in report["runs"])
    assert "after the first it is an upper bound" in (tmp_path / "presses.md").read_text()
    config = json.loads((tmp_path / "snapkv-0.5" / "config.json").read_text())["config"]["model"]
    assert config["press"] == "snapkv:0.5" and config["kvpress"] == "0.5.5"
    labels = [run.label for run in load_runs([tmp_path / "full", tmp_path / "snapkv-0.5"])]
    assert labels == ["smollm2", "smollm2 (press snapkv:0.5)"]  # what `longread report` tables them as
    # resuming a run under another press is refused, naming both
    again = longread_in_presses("eval", "chapterbreak", "--data", str(chapterbreak), "--model", "smollm2",
                                "--out", str(tmp_path / "snapkv-0.5"), "--press", "knorm:0.5", "--resume",
                                *SMALL)  # fmt: skip
    assert again.returncode != 0 and "'snapkv:0.5' → 'knorm:0.5'" in again.stderr
    # --distances: every setting also ran on the instances with a planted copy 128 tokens back
    horizons = {entry["setting"]: entry for entry in report["copy_horizons"]}
    assert sorted(horizons) == ["full cache", "snapkv:0", "snapkv:0.5"]
    [planted] = horizons["full cache"]["rows"]
    assert planted["paired"] == 5 and planted["distance"] == 128 and planted["planted"] >= 0.8
    assert horizons["snapkv:0"]["rows"] == horizons["full cache"]["rows"]  # the no-op keeps the copy
    [against] = horizons["snapkv:0"]["against_full"]
    assert against["difference"] == 0 and against["n"] == 5
    assert len(_rows(tmp_path / "planted" / "snapkv-0.5")) == 5
    assert (tmp_path / "presses_horizon.png").stat().st_size > 10_000
    # 5 pairs cannot reach the horizon's p < 0.01 (at best 2·0.5^5): the page says the nulls mean nothing
    page = (tmp_path / "presses.md").read_text()
    assert "The full cache shows no planted copy used at any distance" in page


def test_gemma3_presses_its_global_layers_only_past_the_window(chapterbreak: Path, tmp_path: Path) -> None:
    extra = ["--prefix-lengths", "768", "--limit", "2", "-o", "suffix_tokens=32", "--quiet"]
    report = _presses(chapterbreak, tmp_path, "gemma3", "snapkv,expected_attention", "0,0.5", *extra)
    full, zero, half = (_rows(tmp_path / name) for name in ("full", "snapkv-0", "snapkv-0.5"))
    for key, row in full.items():
        # the full cache reads the context in 512-token chunks, the press in one forward: within tolerance
        pairs = zip(zero[key]["logprobs"], row["logprobs"], row["continuation_tokens"], strict=True)
        for got, want, tokens in pairs:
            assert got == pytest.approx(want, abs=summed_logprob_tolerance(tokens))
        pressed = half[key]
        n = pressed["context_tokens_pressed"]  # the BOS and the text but its last token
        assert n == row["context_tokens_kept"] > 512 and pressed["pressed_layers"] == [5, 11, 17]
        kept = pressed["kept_cache_per_layer"]
        assert all(kept[i] == n // 2 for i in (5, 11, 17)) and pressed["kept_cache_tokens"] == n // 2
        assert all(kept[i] == 511 for i in range(18) if i not in (5, 11, 17))  # the sliding window's own
        assert pressed["logprobs"] != row["logprobs"]
    refused = {run["press"]: run["refused"] for run in report["runs"] if run["refused"]}
    # kvpress's ExpectedAttention reads one rotary embedding; Gemma 3 has one per layer type. At ratio 0 it
    # compresses nothing and runs; at 0.5 it is refused with kvpress's own error, the other settings kept.
    assert (
        set(refused) == {"expected_attention:0.5"}
        and "Gemma3ForCausalLM" in refused["expected_attention:0.5"]
    )
    assert "Refused (1)" in (tmp_path / "presses.md").read_text()


@pytest.mark.parametrize("model", ["smollm2", "gemma3"])
def test_summaries_and_a_muld_generation_task_under_a_press(model: str, tmp_path: Path) -> None:
    converted()
    book = tmp_path / "pride.json"
    book.write_text(_summaries_book().model_dump_json(), encoding="utf-8")
    chosen = ["--presses", "knorm", "--ratios", "0.5", "--quiet"]
    done = longread_in_presses("presses", "narrativexl-summaries", "--data", str(book), "--model", model,
                               "--out", str(tmp_path / "s"), *chosen)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    full, pressed = _rows(tmp_path / "s" / "full"), _rows(tmp_path / "s" / "knorm-0.5")
    for key, row in pressed.items():
        # the scene is pressed; the question and the options are not
        assert row["press"] == "knorm" and row["kept_cache_tokens"] == row["context_tokens_pressed"] // 2
        assert (
            row["context_tokens_pressed"] < row["context_tokens_kept"]
            and row["logprobs"] != full[key]["logprobs"]
        )
    vlsp = tmp_path / "vlsp.jsonl"
    build_vlsp([copy_theses(tmp_path / "src", ["0704.2963v1"])], vlsp)
    settings = ["-o", "mode=first", "-o", "summary_tokens=8", "-o", "first_tokens=256", "--quiet"]
    done = longread_in_presses("presses", "muld/vlsp", "--data", str(vlsp), "--model", model, "--out",
                               str(tmp_path / "v"), "--presses", "streaming_llm", "--ratios", "0,0.75",
                               *settings)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    full, zero, most = (
        _rows(tmp_path / "v" / name) for name in ("full", "streaming_llm-0", "streaming_llm-0.75")
    )
    assert full and sorted(full) == sorted(most)
    for key, row in full.items():
        # greedy decoding from the compressed cache: the no-op gives the full cache's text
        assert zero[key]["prediction"] == row["prediction"] and most[key]["prediction"]
        assert most[key]["kept_cache_tokens"] == most[key]["context_tokens_pressed"] // 4
