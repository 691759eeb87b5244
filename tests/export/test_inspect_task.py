"""The inspect export: a task file inspect_ai loads, whose dataset holds every exported item.

No model is run here: this checks the file and its samples, not a score.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from longread.export import ExportOptions, export_task
from tests.export.conftest import LENGTHS, SUFFIX_TOKENS


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


PORT = 8831  # the served tests use 8801-8825


@pytest.mark.slow
def test_inspect_scores_every_sample_against_a_served_model(
    chapterbreak_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exported task run by inspect_ai against a real vLLM serving SmolLM2 (a letter per item)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log

    from tests.models.served.vllm_server import running_vllm

    out = tmp_path / "inspect"
    export_task(
        "chapterbreak", chapterbreak_data, "inspect", out, ExportOptions("smollm2", (64,), SUFFIX_TOKENS)
    )
    monkeypatch.chdir(out)  # as a user runs it: `inspect eval longread_chapterbreak.py` in the folder
    with running_vllm(PORT, tmp_path / "vllm.log", max_model_len=2048) as server:
        logs = inspect_eval(
            "longread_chapterbreak.py",
            model="openai-api/longread/smollm2",
            model_base_url=server.base_url,
            model_args={"api_key": "none"},
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
