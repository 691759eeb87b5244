"""Exports are declared beside their benchmarks: ``export/`` knows no task, and a new task exports to
every target through its own maker alone (a tiny multiple-choice task declared here, in the test)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import ClassVar

import pytest

from longread.evaluation import registry
from longread.export import ExportOptions, export_task
from longread.exportable import (
    Exported,
    ExportRequest,
    TaskItems,
    count,
    cut_context,
    cut_continuation,
    cut_fields,
    exportable_tasks,
)

EXPORT_PACKAGE = Path(__file__).parents[2] / "src" / "longread" / "export"
WORDS = "tests/words"


class WordsTask:
    """Only what ``longread export`` asks of a task: the maker of its items."""

    exporter: ClassVar[str] = "tests.export.test_declared:export_words"


def export_words(request: ExportRequest) -> Exported:
    """Each line ``{"id", "context", "choices", "label"}`` becomes one item per prefix length."""
    lines = [json.loads(line) for path in request.files for line in path.read_text().splitlines()]
    lengths = request.prefix_lengths or (8,)
    items = TaskItems(
        task=request.task,
        tokenizer=request.tokenizer_name,
        prefix_lengths=lengths,
        suffix_tokens=None,
        citation="@misc{words}",
        scoring_rule="the first highest log-prob",
        features={"id": "the line's id"},
        build_command="written by hand",
        collections={"words": len(lines)},
        books=1,
        seeds=[None],
        unit="line(s)",
        licences={"words": "written for this test"},
    )
    items.start_lengths()
    for length in lengths:
        for line in lines:
            context = cut_context(request.tokenizer, line["context"], length)
            choices = [
                cut_continuation(request.tokenizer, context.text, text, 1 << 30) for text in line["choices"]
            ]
            count(items.counts[length], context, choices, length)
            fields = cut_fields(context, choices, request.tokenizer_name)
            items.items[length].append(
                {"id": line["id"], "prefix_length": length, **fields, "label": line["label"]}
            )
    return Exported(items, request.files)


@pytest.fixture()
def words_task(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_TASKS", dict(registry._TASKS))
    registry.register_task(WORDS, "tests.export.test_declared:WordsTask")


def test_no_module_of_export_names_a_task_or_imports_a_benchmark() -> None:
    sources = {path.name: path.read_text(encoding="utf-8") for path in sorted(EXPORT_PACKAGE.glob("*.py"))}
    assert len(sources) >= 6
    for name, text in sources.items():
        assert "longread.benchmarks" not in text.replace("longread.benchmarks.NAME", ""), name
        for task in registry.task_names():
            for word in {task, task.split("/")[0]}:
                assert not re.search(rf"\b{re.escape(word)}\b", text, re.IGNORECASE), (name, task, word)


def test_every_registered_task_declares_its_export() -> None:
    assert exportable_tasks() == registry.task_names()


def test_a_task_declared_outside_exports_to_every_target(words_task: None, tmp_path: Path) -> None:
    data = tmp_path / "words.jsonl"
    rows = [
        {
            "id": "a",
            "context": "The ship sailed out of the harbour at dawn, and",
            "choices": [" the", " a"],
            "label": 0,
        },
        {"id": "b", "context": "She opened the letter", "choices": [" slowly.", " at once."], "label": 1},
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert WORDS in exportable_tasks()
    options = ExportOptions("gpt2", prefix_lengths=(4, 64))
    for target in ("hf", "lm-eval", "inspect"):
        report = export_task(WORDS, data, target, tmp_path / target, options)
        assert report.files and all(path.is_file() for path in report.files)
    card = (tmp_path / "hf" / "README.md").read_text()
    assert "from 1 line(s) (words: 2 instances)" in card and "- words: written for this test" in card
    jsonl = tmp_path / "lm-eval" / "data" / "longread_tests_words_4.jsonl"
    items = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert [item["id"] for item in items] == ["a", "b"]
    assert items[0]["context_tokens"] == 4 and items[0]["context_tokens_original"] == 11
    assert items[1]["context_tokens"] == 4 and items[1]["context"] == "She opened the letter"
    assert (tmp_path / "inspect" / "longread_tests_words.py").is_file()


def test_a_muld_export_reads_its_data_once(
    style_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The instances and the records the hf export keeps beside them come from one read of the file."""
    from longread.benchmarks.muld.tasks import common

    reads: list[Path] = []
    original = common.read_records

    def counting(path: Path) -> object:
        reads.append(path)
        return original(path)

    monkeypatch.setattr(common, "read_records", counting)
    export_task("muld/style-change", style_data, "hf", tmp_path / "hf", ExportOptions("gpt2"))
    assert reads == [style_data]
    manifest = json.loads((tmp_path / "hf" / "longread_export.json").read_text())
    assert manifest["task"] == "muld/style-change"
