"""Every run says what produced it, and ``report`` compares it: a real SmolLM2 run's config holds the
software and how the model computed; two runs of it made under different installs have their differing
versions listed, with the verdict on their log-probs against the stated tolerance."""

from __future__ import annotations

import importlib.metadata
import json
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from longread import read_book
from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.io import write_instances
from longread.documents.bundled import resolve_bundled
from longread.report import build_report
from longread.report.html import build_html_report

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smollm2_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A ChapterBreak run of SmolLM2 on Frankenstein, made by the command line; (run, its output)."""
    folder = tmp_path_factory.mktemp("versions")
    book = read_book(resolve_bundled("bundled:pg84")[0])
    instances = build_book(book, BuildOptions(prefix_tokens=400, suffix_tokens=32)).instances[:3]
    write_instances(instances, folder / "cb.jsonl")
    command = [
        sys.executable, "-m", "longread.cli", "eval", "chapterbreak", "--data", str(folder / "cb.jsonl"),
        "--model", "smollm2", "--out", str(folder / "run"), "--prefix-lengths", "256",
        "--suffix-tokens", "32",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return folder / "run", done.stdout + done.stderr


def test_a_run_records_the_software_and_how_the_model_computed(smollm2_run: tuple[Path, str]) -> None:
    run, output = smollm2_run
    assert "deprecated" not in output.lower(), output  # transformers' `past_key_values` warning included
    stored = json.loads((run / "config.json").read_text())
    runtime = stored["sessions"][0]["runtime"]
    software = runtime["software"]
    assert software["python"] == platform.python_version()
    for name in ("torch", "transformers", "tokenizers", "accelerate", "gguf", "safetensors"):
        assert software["libraries"][name] == importlib.metadata.version(name), name
    assert software["libraries"]["kvpress"] is None  # not installed here: recorded as such
    backend = runtime["backend"]
    assert (backend["device"], backend["dtype"]) == ("cpu", "float32")
    assert backend["attention"] in {"sdpa", "eager"} and int(backend["threads"]) >= 1
    # runtime, not identity: the versions are no part of what the config hash covers
    assert "transformers" not in stored["config"]["model"] and "torch" not in stored["config"]["model"]
    assert stored["config"]["model"]["weights_fingerprint"]


def _as_made_under(run: Path, copy: Path, transformers: str) -> Path:
    """``run`` copied, its sessions recorded as made under another transformers."""
    shutil.copytree(run, copy)
    stored = json.loads((copy / "config.json").read_text())
    for session in stored["sessions"]:
        session["runtime"]["software"]["libraries"]["transformers"] = transformers
    (copy / "config.json").write_text(json.dumps(stored))
    return copy


def test_report_lists_the_versions_that_differ_and_judges_the_log_probs(
    smollm2_run: tuple[Path, str], tmp_path: Path
) -> None:
    run, _ = smollm2_run
    installed = importlib.metadata.version("transformers")
    other = _as_made_under(run, tmp_path / "other", "5.2.0")
    files = build_report([run, other], tmp_path / "report")
    markdown = files.markdown.read_text()
    assert f"| transformers | {installed} | 5.2.0 |" in markdown
    assert "| torch |" not in markdown  # the same torch: not listed
    rows = len((run / "samples.jsonl").read_text().splitlines())
    assert f"{rows} shared rows; all {rows * 6} log-probs within the tolerance" in markdown
    assert f"the same output in all {rows} rows." in markdown
    summary = json.loads(files.json_file.read_text())["software"]
    assert summary["differing"] == ["transformers"]
    page = build_html_report([run, other], tmp_path / "html").read_text()  # the page says the same
    assert f"<tr><th>transformers</th><td>{installed}</td><td>5.2.0</td></tr>" in page
    assert f"all {rows * 6} log-probs within the tolerance" in page
    assert summary["agreement"][0]["beyond"] == 0 and summary["agreement"][0]["largest"] == 0.0

    # One candidate's log-prob moved by 0.05 nats: 50x the bound for a 32-token sum (1e-4 × 32 = 3.2e-3).
    lines = (other / "samples.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["logprobs"][2] += 0.05
    (other / "samples.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    markdown = build_report([run, other], tmp_path / "report2").markdown.read_text()
    assert f"**1 of {rows * 6} log-probs differ past the tolerance**" in markdown
    assert f"largest |Δ| 0.05 nats ({first['key']} logprobs[2])" in markdown


def test_report_counts_the_rows_whose_outputs_differ(smollm2_run: tuple[Path, str], tmp_path: Path) -> None:
    """A near-tie the two installs broke differently: every log-prob within the tolerance, one row's
    prediction another; the report names the row."""
    run, _ = smollm2_run
    other = _as_made_under(run, tmp_path / "other", "5.2.0")
    lines = (other / "samples.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    rows[1]["prediction"] = (rows[1]["prediction"] + 1) % len(rows[1]["logprobs"])
    (other / "samples.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    files = build_report([run, other], tmp_path / "report")
    markdown = files.markdown.read_text()
    n = len(rows)
    assert f"all {n * 6} log-probs within the tolerance" in markdown
    assert (
        f"**the same output in {n - 1} of {n} rows** (the first that differs: {rows[1]['key']})" in markdown
    )
    page = build_html_report([run, other], tmp_path / "html").read_text()
    assert f"<strong>the same output in {n - 1} of {n} rows</strong>" in page
    agreement = json.loads(files.json_file.read_text())["software"]["agreement"][0]
    assert (agreement["outputs"], agreement["outputs_same"]) == (n, n - 1)


def test_runs_of_two_models_are_not_held_to_agree(smollm2_run: tuple[Path, str], tmp_path: Path) -> None:
    """Two models on the same data, task and settings (the demo's SmolLM2 beside another model) differ by
    design: the report compares no log-probs between them, and says nothing of "the same numbers"."""
    run, _ = smollm2_run
    other = tmp_path / "gemma3"
    shutil.copytree(run, other)
    stored = json.loads((other / "config.json").read_text())
    stored["config"]["model"].update(
        spec="gemma3", name="gemma3", weights="/elsewhere/gemma3", weights_fingerprint="0123456789abcdef"
    )
    (other / "config.json").write_text(json.dumps(stored))
    rows = [json.loads(line) for line in (other / "samples.jsonl").read_text().splitlines()]
    for row in rows:
        row["logprobs"] = [value - 1.0 for value in row["logprobs"]]  # another model's numbers
    (other / "samples.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    files = build_report([run, other], tmp_path / "report")
    markdown = files.markdown.read_text()
    assert "shared rows" not in markdown and "tolerance" not in markdown, markdown
    assert json.loads(files.json_file.read_text())["software"]["agreement"] == []
    assert "<h2>Software</h2>" not in build_html_report([run, other], tmp_path / "html").read_text()


def test_runs_of_one_name_read_another_way_are_named_not_compared(
    smollm2_run: tuple[Path, str], tmp_path: Path
) -> None:
    """An older run of the same model whose weights were fingerprinted another way (or other weights under
    the name): the report does not hold it to agree, and says so instead of falling silent."""
    run, _ = smollm2_run
    other = tmp_path / "older"
    shutil.copytree(run, other)
    stored = json.loads((other / "config.json").read_text())
    mine = stored["config"]["model"]["weights_fingerprint"]
    stored["config"]["model"]["weights_fingerprint"] = "0000000000000000"
    (other / "config.json").write_text(json.dumps(stored))
    files = build_report([run, other], tmp_path / "report")
    markdown = files.markdown.read_text()
    assert (
        f"**not compared**: the same model's name, computed another way (weights_fingerprint {mine} ≠ "
        in markdown
    )
    assert "log-probs within the tolerance" not in markdown
    (agreement,) = json.loads(files.json_file.read_text())["software"]["agreement"]
    assert (
        agreement["not_compared"] == f"weights_fingerprint {mine} ≠ 0000000000000000"
        and agreement["rows"] == 0
    )


def test_runs_of_two_windows_are_compared_and_a_difference_is_put_to_the_windows(
    smollm2_run: tuple[Path, str], tmp_path: Path
) -> None:
    """Two runs that differ only in ``--max-length``: where neither window cut a row they agree and are said
    to; where they differ the report names the windows, not the software."""
    run, _ = smollm2_run
    other = tmp_path / "window"
    shutil.copytree(run, other)
    stored = json.loads((other / "config.json").read_text())
    window = stored["config"]["model"]["max_length"]
    stored["config"]["model"]["max_length"] = "512"
    (other / "config.json").write_text(json.dumps(stored))
    markdown = build_report([run, other], tmp_path / "report").markdown.read_text()
    assert (
        f"log-probs within the tolerance (though the windows differ: max_length {window} ≠ 512)" in markdown
    )
    lines = (other / "samples.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["logprobs"][0] -= 1.0  # as if the shorter window had cut what this row read
    (other / "samples.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    markdown = build_report([run, other], tmp_path / "report2").markdown.read_text()
    assert f"differ past the tolerance**: the windows differ (max_length {window} ≠ 512)" in markdown
    assert "do not compute the same numbers" not in markdown
