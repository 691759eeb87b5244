"""The hf export: a folder `datasets.load_dataset` reads offline, a card saying what it is, a round trip."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from longread.benchmarks.chapterbreak.export import as_instance
from longread.benchmarks.chapterbreak.exported import load_exported
from longread.benchmarks.chapterbreak.io import load_instances
from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.errors import BadInputError
from longread.evaluation import RunOptions, run_task
from longread.evaluation.exported import MANIFEST
from longread.export import ExportOptions, export_task, read_hf_items
from longread.models import load_backend
from longread.models.hf.backend import HFTokenEncoder
from longread.models.hf.loading import smollm2_tokenizer
from longread.models.requests import LoglikelihoodRequest
from longread.models.tokens import encode_request
from tests.export.conftest import LENGTHS, SUFFIX_TOKENS

OPTIONS = ExportOptions("smollm2", LENGTHS, SUFFIX_TOKENS)


@pytest.fixture(scope="module")
def hf_folder(chapterbreak_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hf") / "export"
    export_task("chapterbreak", chapterbreak_data, "hf", folder, OPTIONS)
    return folder


def test_datasets_reads_every_config_offline(hf_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    for length in LENGTHS:
        split = datasets.load_dataset(str(hf_folder), f"prefix_{length}")["test"]
        assert split.num_rows == 3
        assert set(split["prefix_length"]) == {length}
        assert all(len(choices) == 6 for choices in split["choices"])
        assert set(split["label"]) == {5}


def test_card_states_configs_provenance_and_counts(hf_folder: Path, chapterbreak_data: Path) -> None:
    card = (hf_folder / "README.md").read_text()
    assert card.startswith("---\n")
    for length in LENGTHS:
        assert f"- config_name: prefix_{length}" in card
        assert f"path: prefix_{length}/test-00000-of-00001.parquet" in card
        assert f"| prefix_{length} | 3 | 3 | 0 | 0 | 18 | 0 |" in card
    assert hashlib.sha256(chapterbreak_data.read_bytes()).hexdigest() in card
    assert "--seed 0 --tokenizer gpt2 --prefix-tokens 160 --suffix-tokens 48" in card
    assert "tokenizer: `smollm2`" in card
    assert "Project Gutenberg" in card
    assert "sun-etal-2022-chapterbreak" in card


def test_round_trip_gives_the_tokens_longread_scores(hf_folder: Path, chapterbreak_data: Path) -> None:
    """Read back, each config's items are instances longread scores with exactly the original's tokens."""
    encoder = HFTokenEncoder(smollm2_tokenizer())
    originals = {instance.id: instance for instance in load_instances(chapterbreak_data)}
    for length in LENGTHS:
        items = read_hf_items(hf_folder, length)
        assert [item["id"] for item in items] == list(originals)
        for item in items:
            back = as_instance(item, SUFFIX_TOKENS)
            original = originals[back.id]
            assert (back.book_id, back.chapter_index, back.seed) == (
                original.book_id,
                original.chapter_index,
                original.seed,
            )
            requests = [
                LoglikelihoodRequest(inst.prefix, tuple(inst.candidates), length, SUFFIX_TOKENS)
                for inst in (original, back)
            ]
            theirs, ours = (encode_request(encoder, request, 8192) for request in requests)
            assert ours.context == theirs.context
            assert ours.continuations == theirs.continuations
            assert len(ours.context) == length


def test_same_data_gives_identical_bytes(hf_folder: Path, chapterbreak_data: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    export_task("chapterbreak", chapterbreak_data, "hf", again, OPTIONS)
    names = sorted(p.relative_to(hf_folder) for p in hf_folder.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for name in names:
        assert (hf_folder / name).read_bytes() == (again / name).read_bytes(), name


def _eval_rows(data: Path, run: Path) -> list[str]:
    """ChapterBreak evaluated on DATA at the export's lengths (what `longread eval` runs); a tiny random
    model is enough: the rows hold every token count and log-prob, so any difference in the instances
    read shows."""
    settings = ChapterBreakSettings(prefix_lengths=LENGTHS, suffix_tokens=SUFFIX_TOKENS)
    quiet = RunOptions(show_progress=False)
    run_task(ChapterBreakTask(settings), data, load_backend("random:gpt2"), run, quiet)
    return (run / "samples.jsonl").read_text().splitlines()


def test_eval_reads_the_folder_back_to_the_same_rows(
    hf_folder: Path, chapterbreak_data: Path, tmp_path: Path
) -> None:
    """`longread eval chapterbreak` on the hf folder scores exactly what it scores on the built JSONL."""
    from_jsonl = _eval_rows(chapterbreak_data, tmp_path / "jsonl")
    from_folder = _eval_rows(hf_folder, tmp_path / "folder")
    assert len(from_jsonl) == 3 * len(LENGTHS)
    assert from_folder == from_jsonl
    assert load_exported(hf_folder) == load_instances(chapterbreak_data)


def test_eval_refuses_an_export_of_another_task(hf_folder: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(hf_folder, other)
    manifest = json.loads((other / MANIFEST).read_text())
    (other / MANIFEST).write_text(json.dumps({**manifest, "task": "narrativexl-summaries"}))
    with pytest.raises(BadInputError, match="export of 'narrativexl-summaries', not of 'chapterbreak'"):
        ChapterBreakTask().load(other)
