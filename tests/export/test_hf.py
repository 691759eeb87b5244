"""The hf export: a folder `datasets.load_dataset` reads offline, a card saying what it is, a round trip."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from longread.benchmarks.chapterbreak.io import load_instances
from longread.export import ExportOptions, as_instance, export_task, read_hf_items
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
