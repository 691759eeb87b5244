"""The inspect export: a task file inspect_ai loads, whose dataset holds every exported item, and inspect
runs against a real vLLM serving SmolLM2 (the session's one server, taking a request's chat template).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from longread.evaluation import RunOptions, make_task, run_task
from longread.export import ExportOptions, export_task
from longread.models.registry import load_backend
from tests.export.conftest import LENGTHS, SUFFIX_TOKENS
from tests.helpers import needs_shared
from tests.models.served.vllm_server import API_KEY, VLLMServer, key_in_environment


def _load(task_file: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("exported_task", task_file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_task_file_loads_and_holds_every_item(chapterbreak_data: Path, tmp_path: Path) -> None:
    from inspect_ai import Task

    out = tmp_path / "inspect"
    export_task(
        "chapterbreak", chapterbreak_data, "inspect", out, ExportOptions("gpt2", LENGTHS, SUFFIX_TOKENS)
    )
    module = _load(out / "longread_chapterbreak.py")
    for length in LENGTHS:
        exported = [
            json.loads(line)
            for line in (out / "data" / f"longread_chapterbreak_{length}.jsonl").read_text().splitlines()
        ]
        task = module.longread_chapterbreak(prefix_length=length)
        assert isinstance(task, Task)
        samples = list(task.dataset)
        assert [s.id for s in samples] == [f"{item['id']}@{length}" for item in exported]
        for sample, item in zip(samples, exported, strict=True):
            assert sample.input == item["context"]
            assert sample.choices is not None and sorted(sample.choices) == sorted(item["choices"])
            gold = item["choices"][item["label"]]
            assert isinstance(sample.target, str)
            assert sample.choices[ord(sample.target) - ord("A")] == gold
    with pytest.raises(ValueError, match="prefix_length 100 was not exported"):
        module.longread_chapterbreak(prefix_length=100)


WINDOW = 512
VLSP = (("mode", "first"), ("summary_tokens", "16"))


@pytest.fixture(scope="module")
def inspect_vllm(vllm: VLLMServer) -> Iterator[VLLMServer]:
    """The session's vLLM serving SmolLM2 (it takes a chat template in a request, as inspect sends one),
    with its key where longread's served backend reads it."""
    with key_in_environment():
        yield vllm


@pytest.mark.slow
def test_inspect_scores_every_sample_against_a_served_model(
    chapterbreak_data: Path, inspect_vllm: VLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exported task run by inspect_ai against a real vLLM serving SmolLM2 (a letter per item)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log

    out = tmp_path / "inspect"
    export_task(
        "chapterbreak", chapterbreak_data, "inspect", out, ExportOptions("smollm2", (64,), SUFFIX_TOKENS)
    )
    monkeypatch.chdir(out)  # as a user runs it: `inspect eval longread_chapterbreak.py` in the folder
    logs = inspect_eval(
        "longread_chapterbreak.py",
        model="openai-api/longread/smollm2",
        model_base_url=inspect_vllm.base_url,
        model_args={"api_key": API_KEY},
        task_args={"prefix_length": 64},
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_tokens=8,
        temperature=0.0,
    )
    assert len(logs) == 1 and logs[0].status == "success", logs[0].error
    log = read_eval_log(logs[0].location)
    assert log.samples is not None and len(log.samples) == 3
    for sample in log.samples:
        assert sample.scores is not None and sample.scores["choice"].value in ("C", "I")


@needs_shared
@pytest.mark.slow
def test_inspect_generates_what_longread_generates_through_the_same_server(
    vlsp_data: Path, inspect_vllm: VLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The MuLD VLSP export (window 512, 16 new tokens) run by inspect against the server, the prompt
    rendered verbatim: its greedy generations and BLEU are longread's own through the same server."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log

    out = tmp_path / "inspect"
    options = ExportOptions("smollm2", max_length=WINDOW, settings=VLSP)
    export_task("muld/vlsp", vlsp_data, "inspect", out, options)
    monkeypatch.chdir(out)
    served = load_backend(inspect_vllm.spec(), max_length=WINDOW)
    run_task(
        make_task("muld/vlsp", dict(VLSP)),
        vlsp_data,
        served,
        tmp_path / "run",
        RunOptions(show_progress=False),
    )
    logs = inspect_eval(
        "longread_muld_vlsp.py",
        model="openai-api/longread/smollm2",
        model_base_url=inspect_vllm.base_url,
        model_args={"api_key": API_KEY},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert len(logs) == 1 and logs[0].status == "success", logs[0].error
    log = read_eval_log(logs[0].location)
    assert log.samples is not None and len(log.samples) == 2
    lines = (tmp_path / "run/samples.jsonl").read_text().splitlines()
    rows = {row["id"]: row for row in map(json.loads, lines)}
    theirs: dict[str, Any] = {}
    for sample in log.samples:
        assert sample.scores is not None
        score = sample.scores["longread_text_scores"]
        assert isinstance(score.value, dict) and set(score.value) == {"rouge_l", "meteor", "token_f1"}
        theirs[str(sample.id)] = sample.output.completion.strip()
    assert theirs == {key: row["prediction"] for key, row in rows.items()}
    assert all(theirs.values())
    results = log.results
    assert results is not None
    values = {metric.name: metric.value for score in results.scores for metric in score.metrics.values()}
    overall = json.loads((tmp_path / "run/results.json").read_text())["overall"]["metrics"]
    for metric in ("bleu1", "bleu4"):
        assert values[metric] == pytest.approx(overall[metric]["value"], abs=1e-9), metric
