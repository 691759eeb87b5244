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
    pytest.importorskip("inspect_ai")
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
