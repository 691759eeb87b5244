"""The NarrativeXL read-along export: items that are the task's own requests cut, an hf folder that reads
back to the same rows (read-along and summaries), an inspect task file that loads.

The data is a real build directory (one Frankenstein book, questions drawn as the build draws them, see
the ``narrativexl_build`` fixture); no model is needed except the tiny random one of the round trip.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longread.benchmarks.narrativexl.exported import load_exported_reading, load_exported_summaries
from longread.benchmarks.narrativexl.load import load_book_summaries, load_reading_books
from longread.benchmarks.narrativexl.summaries_task import SummariesTask
from longread.benchmarks.narrativexl.task import NarrativeXLTask
from longread.errors import BadInputError, LongreadError
from longread.evaluation import RunOptions, run_task
from longread.export import ExportOptions, export_task, read_hf_items
from longread.models import load_backend
from longread.models.hf.backend import HFTokenEncoder
from longread.models.hf.loading import smollm2_tokenizer
from longread.models.requests import LOGLIKELIHOOD, LoglikelihoodRequest
from longread.models.tokens import encode_request
from tests.export.test_inspect_task import _load

LENGTHS = (256, 1024)
OPTIONS = ExportOptions("smollm2", LENGTHS)


@pytest.fixture(scope="module")
def hf_folder(narrativexl_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("nxl-hf") / "export"
    export_task("narrativexl", narrativexl_build, "hf", folder, OPTIONS)
    return folder


def test_items_are_the_tasks_requests_cut_to_the_same_tokens(
    hf_folder: Path, narrativexl_build: Path
) -> None:
    """Each item's context re-tokenises to the ids longread keeps for the task's log-likelihood request at
    window N; its choices are the task's options, the true one last, with the task's token counts."""
    encoder = HFTokenEncoder(smollm2_tokenizer())
    (book,) = load_reading_books(narrativexl_build)
    task = NarrativeXLTask()
    samples = task.samples(book)
    for length in LENGTHS:
        items = read_hf_items(hf_folder, length)
        assert [item["id"] for item in items] == [sample.key for sample in samples]
        for item, sample in zip(items, samples, strict=True):
            question = next(q for q in book.questions if q.id == item["id"])
            request = task.request(sample, LOGLIKELIHOOD)
            assert isinstance(request, LoglikelihoodRequest)
            assert item["option_order"][-1] == question.answer == item["option_order"][item["label"]]
            assert item["choices"] == [request.continuations[k] for k in item["option_order"]]
            assert item["option_kinds"][-1] == ("none" if question.none_is_answer else "true")
            assert (item["retention_demand"], item["question_type"]) == (
                question.retention_demand,
                question.question_type,
            )
            ours = encode_request(
                encoder, LoglikelihoodRequest(request.context, request.continuations, length), 8192
            )
            theirs = encode_request(
                encoder, LoglikelihoodRequest(item["context"], tuple(item["choices"])), 8192
            )
            assert theirs.context == ours.context
            assert len(ours.context) == min(length, item["context_tokens_original"]) == item["context_tokens"]
            assert list(theirs.continuations) == [ours.continuations[k] for k in item["option_order"]]
            assert item["choice_tokens"] == [len(ids) for ids in theirs.continuations]


def test_counts_card_and_datasets(hf_folder: Path, narrativexl_build: Path) -> None:
    import datasets

    manifest = json.loads((hf_folder / "longread_export.json").read_text())
    assert manifest["task"] == "narrativexl" and manifest["prefix_lengths"] == list(LENGTHS)
    # four scenes of ~650 tokens: every context is longer than 256; the questions after scene 0 fit 1024
    assert manifest["counts"]["256"] == {
        "items": 9, "context_cut": 9, "short_prefix": 0, "context_inexact": 0,
        "candidates_cut": 0, "candidates_inexact": 0,
    }  # fmt: skip
    assert manifest["counts"]["1024"]["context_cut"] == 7 and manifest["counts"]["1024"]["short_prefix"] == 2
    card = (hf_folder / "README.md").read_text()
    assert "| prefix_256 | 9 | 9 | 0 | 0 | 0 | 0 |" in card
    assert "cut-left policy" in card and "moskvichev2023narrativexl" in card
    rows = datasets.load_dataset(str(hf_folder), "prefix_1024")["test"]
    assert rows.num_rows == 9 and set(rows["label"]) == {3}
    assert set(rows["question_type"]) == {"lookahead", "change", "otherbook"}


def test_generate_mode_is_refused(narrativexl_build: Path, tmp_path: Path) -> None:
    options = ExportOptions("gpt2", (64,), settings=(("answer_mode", "generate"),))
    with pytest.raises(LongreadError, match=r"answer_mode=generate .* is not exported"):
        export_task("narrativexl", narrativexl_build, "hf", tmp_path / "out", options)
    assert not (tmp_path / "out").exists()


def _rows(task: NarrativeXLTask | SummariesTask, data: Path, run: Path) -> list[str]:
    """The task evaluated on DATA with a tiny random model: the rows hold every option's log-prob and token
    count, the tokens read and the window, so any difference in the books read shows."""
    run_task(task, data, load_backend("random:gpt2"), run, RunOptions(show_progress=False))
    return (run / "samples.jsonl").read_text().splitlines()


def test_eval_reads_the_readalong_folder_back_to_the_same_rows(
    hf_folder: Path, narrativexl_build: Path, tmp_path: Path
) -> None:
    """`longread eval narrativexl` on the hf folder scores exactly what it scores on the build directory."""
    assert load_exported_reading(hf_folder) == load_reading_books(narrativexl_build)
    from_build = _rows(NarrativeXLTask(), narrativexl_build, tmp_path / "build")
    from_folder = _rows(NarrativeXLTask(), hf_folder, tmp_path / "folder")
    assert len(from_build) == 9
    assert from_folder == from_build


def test_eval_reads_the_summaries_folder_back_to_the_same_rows(
    narrativexl_build: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "summaries"
    export_task("narrativexl-summaries", narrativexl_build, "hf", folder, ExportOptions("gpt2", (64,)))
    assert load_exported_summaries(folder) == load_book_summaries(narrativexl_build)
    from_build = _rows(SummariesTask(), narrativexl_build, tmp_path / "build")
    from_folder = _rows(SummariesTask(), folder, tmp_path / "folder")
    assert len(from_build) == 4
    assert from_folder == from_build


def test_each_task_refuses_the_others_export(
    hf_folder: Path, narrativexl_build: Path, tmp_path: Path
) -> None:
    with pytest.raises(BadInputError, match="export of 'narrativexl', not of 'narrativexl-summaries'"):
        SummariesTask().load(hf_folder)
    folder = tmp_path / "summaries"
    export_task("narrativexl-summaries", narrativexl_build, "hf", folder, ExportOptions("gpt2", (64,)))
    with pytest.raises(BadInputError, match="export of 'narrativexl-summaries', not of 'narrativexl'"):
        NarrativeXLTask().load(folder)


def test_inspect_task_file_loads_and_holds_every_item(narrativexl_build: Path, tmp_path: Path) -> None:
    from inspect_ai import Task

    out = tmp_path / "inspect"
    export_task("narrativexl", narrativexl_build, "inspect", out, OPTIONS)
    module = _load(out / "longread_narrativexl.py")
    assert "choices kept whole" in (module.__doc__ or "")
    for length in LENGTHS:
        lines = (out / "data" / f"longread_narrativexl_{length}.jsonl").read_text().splitlines()
        exported = [json.loads(line) for line in lines]
        task = module.longread_narrativexl(prefix_length=length)
        assert isinstance(task, Task)
        samples = list(task.dataset)
        assert [s.id for s in samples] == [f"{item['id']}@{length}" for item in exported]
        for sample, item in zip(samples, exported, strict=True):
            assert sample.input == item["context"]
            assert sample.choices is not None and sorted(sample.choices) == sorted(item["choices"])
            assert isinstance(sample.target, str)
            assert sample.choices[ord(sample.target) - ord("A")] == item["choices"][item["label"]]
            assert sample.metadata is not None
            assert sample.metadata["retention_demand"] == item["retention_demand"]
            assert sample.metadata["question_type"] == item["question_type"]
    with pytest.raises(ValueError, match="prefix_length 100 was not exported"):
        module.longread_narrativexl(prefix_length=100)
