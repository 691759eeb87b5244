"""The MuLD exports to Hugging Face datasets and inspect_ai, and `longread eval muld/* --data HF_DIR`.

Real data: two theses of the shared corpus (VLSP), the HotpotQA and NarrativeQA samples in their
published formats, three style-change documents drawn from Gutenberg novels. The hf folder reads back
offline, and longread evaluates it to exactly the rows it gets from the JSONL. The inspect task file
holds every prompt and the generation settings (tests/export/test_inspect_task.py runs it against a
real vLLM server).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from longread.errors import BadInputError
from longread.evaluation import RunOptions, make_task, run_task
from longread.export import ExportOptions, export_task
from longread.models.registry import load_backend
from tests.export.test_inspect_task import _load
from tests.helpers import needs_shared

pytestmark = needs_shared
WINDOW = 512
VLSP = (("mode", "first"), ("summary_tokens", "16"))
QA = (("chunk_tokens", "128"), ("top_k", "2"), ("answer_tokens", "8"))
ARCHETYPE = (("chunk_tokens", "128"),)
QUIET = RunOptions(show_progress=False)
VLSP_OPTIONS = ExportOptions("smollm2", max_length=WINDOW, settings=VLSP)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _rows(task: str, settings: tuple[tuple[str, str], ...], data: Path, run: Path) -> list[str]:
    """The task evaluated with a tiny random model: rows hold the ids, lines, documents' token counts,
    the chunks kept and the predictions, so any difference in the instances read shows."""
    run_task(
        make_task(task, dict(settings)),
        data,
        load_backend("random:gpt2"),
        run,
        RunOptions(show_progress=False),
    )
    return (run / "samples.jsonl").read_text().splitlines()


def test_vlsp_hf_folder_reads_offline_states_itself_and_is_byte_stable(
    vlsp_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets

    options = ExportOptions("smollm2", max_length=WINDOW, settings=VLSP)
    folder = tmp_path / "hf"
    export_task("muld/vlsp", vlsp_data, "hf", folder, options)
    export_task("muld/vlsp", vlsp_data, "lm-eval", tmp_path / "lm-eval", options)
    items = [
        json.loads(line)
        for line in (tmp_path / "lm-eval/data/longread_muld_vlsp.jsonl").read_text().splitlines()
    ]
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    split = datasets.load_dataset(str(folder), f"prefix_{WINDOW}")["test"]
    assert split.to_list() == items and len(items) == 2
    records = datasets.load_dataset(str(folder), "longread_instances")["test"]
    originals = [json.loads(line) for line in vlsp_data.read_text().splitlines()]
    assert [json.loads(row) for row in records["record"]] == originals
    assert records["line"] == [1, 2] and set(records["source"]) == {vlsp_data.name}
    card = (folder / "README.md").read_text()
    assert "- text-generation" in card and f"| prefix_{WINDOW} | 2 | 2 | 0 |" in card
    assert "`mode=first`" in card and "`summary_tokens=16`" in card and "Hudson" in card
    again = tmp_path / "again"
    export_task("muld/vlsp", vlsp_data, "hf", again, options)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        assert path.read_bytes() == (again / path.relative_to(folder)).read_bytes(), path


TASKS = [
    "muld/vlsp",
    "muld/hotpotqa",
    "muld/narrativeqa",
    "muld/style-change",
    "muld/character-archetype",
    "muld/opensubtitles",
]


@pytest.mark.parametrize("task", TASKS)
def test_eval_reads_the_hf_folder_back_to_the_same_rows(
    task: str,
    vlsp_data: Path,
    qa_data: dict[str, Path],
    style_data: Path,
    archetype_data: Path,
    subtitles_data: Path,
    tmp_path: Path,
) -> None:
    data = {
        "muld/vlsp": vlsp_data,
        "muld/style-change": style_data,
        "muld/character-archetype": archetype_data,
        "muld/opensubtitles": subtitles_data,
        **qa_data,
    }[task]
    named = {
        "muld/vlsp": VLSP,
        "muld/style-change": (),
        "muld/character-archetype": ARCHETYPE,
        "muld/opensubtitles": (("strategy", "whole"), ("whole_output_tokens", "16")),
    }
    settings = named.get(task, QA)
    export = (("paragraph_tokens", "32"),) if task == "muld/style-change" else settings
    folder = tmp_path / "hf"
    export_task(task, data, "hf", folder, ExportOptions("smollm2", max_length=WINDOW, settings=export))
    if task == "muld/style-change":
        from_data = _style_rows(data, tmp_path / "data")
        from_folder = _style_rows(folder, tmp_path / "folder")
    else:
        from_data = _rows(task, settings, data, tmp_path / "data")
        from_folder = _rows(task, settings, folder, tmp_path / "folder")
    assert len(from_data) == len(make_task(task).load(data)) > 0
    assert from_folder == from_data


def _style_rows(data: Path, run: Path) -> list[str]:
    backend = load_backend("style:stylometric")
    run_task(make_task("muld/style-change"), data, backend, run, QUIET)
    return (run / "samples.jsonl").read_text().splitlines()


def test_an_export_of_another_task_or_a_damaged_one_is_refused(vlsp_data: Path, tmp_path: Path) -> None:
    folder = tmp_path / "hf"
    export_task(
        "muld/vlsp", vlsp_data, "hf", folder, ExportOptions("smollm2", max_length=WINDOW, settings=VLSP)
    )
    with pytest.raises(BadInputError, match="export of 'muld/vlsp', not of 'muld/hotpotqa'"):
        make_task("muld/hotpotqa").load(folder)
    damaged = tmp_path / "damaged"
    shutil.copytree(folder, damaged)
    (damaged / "longread_instances").rename(damaged / "gone")
    with pytest.raises(BadInputError, match="the export has no config longread_instances"):
        make_task("muld/vlsp").load(damaged)
    lm_eval = tmp_path / "lm-eval"
    export_task(
        "muld/vlsp", vlsp_data, "lm-eval", lm_eval, ExportOptions("smollm2", max_length=WINDOW, settings=VLSP)
    )
    with pytest.raises(BadInputError, match=r"holds no \.jsonl / \.jsonl\.bz2 files"):
        make_task("muld/vlsp").load(lm_eval)


def test_inspect_task_file_holds_every_prompt_and_the_generation_settings(
    qa_data: dict[str, Path], tmp_path: Path
) -> None:
    from inspect_ai import Task

    out = tmp_path / "inspect"
    options = ExportOptions("smollm2", max_length=WINDOW, settings=QA)
    export_task("muld/hotpotqa", qa_data["muld/hotpotqa"], "inspect", out, options)
    items = [
        json.loads(line) for line in (out / "data/longread_muld_hotpotqa.jsonl").read_text().splitlines()
    ]
    task = _load(out / "longread_muld_hotpotqa.py").longread_muld_hotpotqa()
    assert isinstance(task, Task)
    samples = list(task.dataset)
    assert [(s.id, s.input, s.target) for s in samples] == [
        (item["id"], item["prompt"], item["references"]) for item in items
    ]
    assert task.config.max_tokens == 8 and task.config.stop_seqs == ["\n"] and task.config.temperature == 0.0
    assert task.config.extra_body is not None and "chat_template" in task.config.extra_body
