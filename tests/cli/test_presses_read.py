"""A press presses the document part the model read, whatever else the run does: under every context
control, with the context cut (a prefix length, ``max_scene_tokens``, a document longer than the window), on
both families and on ChapterBreak, NarrativeXL summaries and MuLD translation (whose instruction comes
partly before its document and is never pressed).

Each row's counts are checked against what the test counts itself: the context tokens read (start token
and text), the question's tokens, the preamble's and instruction's. Before, a context that no longer
started as the document did was taken for all question, so only its start token was pressed (or, without
one, every sample failed)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from longread.benchmarks.muld.builders.opensubtitles import build_opensubtitles
from longread.benchmarks.muld.builders.report import LengthFilter
from longread.benchmarks.muld.tasks.translate import DEFAULT_INSTRUCTION, DEFAULT_PREAMBLE
from tests.benchmarks.muld.builders.test_opensubtitles import ALIGNMENT, RAW
from tests.benchmarks.narrativexl.test_task import _summaries_book
from tests.calibration.data import write_bundled
from tests.helpers import needs_shared
from tests.models_fixtures import backend
from tests.presses import converted, longread_in_presses, stop_presses_server

pytestmark = [needs_shared, pytest.mark.external]
MODELS = ["smollm2", "gemma3"]
QUESTION_MOST = 40
"""More tokens than any summaries question of the test book has (its prompt and a separator)."""


@pytest.fixture(scope="module", autouse=True)
def _fork_server_stopped_at_the_end() -> Iterator[None]:
    yield
    stop_presses_server()


def _rows(run: Path) -> list[dict[str, Any]]:
    errors = run / "errors.jsonl"
    assert not errors.exists() or not errors.read_text().strip(), errors.read_text()[:2000]
    rows = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    assert rows, f"no rows in {run}"
    return rows


def _eval(task: str, data: Path, model: str, out: Path, *options: str) -> list[dict[str, Any]]:
    done = longread_in_presses("eval", task, "--data", str(data), "--model", model, "--out", str(out),
                               "--press", "knorm:0.5", "--quiet", *options)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return _rows(out)


def _start(model: str) -> int:
    return int(backend(model).encoder.start_token_id is not None)


def _half_kept(row: dict[str, Any]) -> None:
    assert row["press"] == "knorm" and row["kept_cache_tokens"] == row["context_tokens_pressed"] // 2


@pytest.mark.parametrize(
    ("model", "control"),
    [
        ("smollm2", ["--context", "replace", "--keep-last", "64"]),
        ("gemma3", ["--context", "none", "--keep-last", "100"]),
    ],
    ids=["smollm2-replace", "gemma3-none"],
)
def test_chapterbreak_cut_to_its_prefix_length_presses_all_it_read_but_the_last_token(
    model: str, control: list[str], tmp_path: Path
) -> None:
    converted()
    data = write_bundled(tmp_path / "cb.jsonl", per_book=1)
    rows = _eval("chapterbreak", data, model, tmp_path / "run", "--limit", "3", "-o", "suffix_tokens=16",
                 "--prefix-lengths", "300", *control)  # fmt: skip
    for row in rows:
        read = _start(model) + row["context_tokens_kept"]  # the start token and the text, as read
        assert row["context_tokens_kept"] == (100 if "none" in control else 300)
        assert row["context_tokens_pressed"] == read - 1 and row["context_tokens_unpressed"] == 1
        _half_kept(row)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize(
    "options",
    [
        ["--context", "shuffle", "--keep-last", "32", "-o", "max_scene_tokens=60"],
        ["--context", "none", "--keep-last", "30", "-o", "max_scene_tokens=70"],
    ],
    ids=["shuffle-and-cut", "none-and-cut"],
)
def test_summaries_press_the_scene_read_and_never_the_question(
    model: str, options: list[str], tmp_path: Path
) -> None:
    converted()
    book = tmp_path / "pride.json"
    book.write_text(_summaries_book().model_dump_json(), encoding="utf-8")
    rows = _eval("narrativexl-summaries", book, model, tmp_path / "run", *options)
    for row in rows:
        read = _start(model) + row["context_tokens_kept"]
        question = row["context_tokens_unpressed"]  # the prompt after the scene (a seam token at most)
        assert 1 <= question <= QUESTION_MOST and row["context_tokens_pressed"] == read - question
        scene = row["context_tokens_kept"] - question  # the scene's tokens read (every scene has 80 or more)
        if "none" in options:
            assert scene == 30  # the scene's last 30 tokens, pressed
        else:
            assert row["context_tokens_kept"] == 60  # cut (the cut counts the prompt too), then shuffled
        _half_kept(row)


@pytest.mark.parametrize("model", MODELS)
def test_translation_keeps_its_preamble_and_instruction_whole_under_a_control_and_a_window_cut(
    model: str, tmp_path: Path
) -> None:
    converted()
    data = tmp_path / "subtitles.jsonl"
    build_opensubtitles(ALIGNMENT, RAW, data, length_filter=LengthFilter(min_tokens=20))
    encoder = backend(model).encoder
    preamble, instruction = (
        len(encoder.encode_plain(DEFAULT_PREAMBLE)),
        len(encoder.encode_plain(DEFAULT_INSTRUCTION)),
    )
    chunks = _eval("muld/opensubtitles", data, model, tmp_path / "chunks", "-o", "chunk_tokens=24",
                   "--context", "shuffle", "--keep-last", "8")  # fmt: skip
    whole = _eval("muld/opensubtitles", data, model, tmp_path / "whole", "-o", "strategy=whole",
                  "-o", "whole_output_tokens=8", "--max-length", "64")  # fmt: skip
    for row in chunks:
        reads = row["pressed_reads"]
        assert reads == row["chunks"] > 1
        assert row["question_tokens_kept_whole"] == reads * preamble
        assert row["context_tokens_unpressed"] == reads * (preamble + instruction)
        assert row["context_tokens_pressed"] >= reads * (_start(model) + 8)
    [row] = whole
    room = 64 - 8 - _start(model) - preamble - instruction  # the document's share of the window (51 tokens)
    assert row["document_tokens_cut"] > 0
    assert row["context_tokens_pressed"] == _start(model) + room
    assert row["question_tokens_kept_whole"] == preamble
    assert row["context_tokens_unpressed"] == preamble + instruction
    _half_kept(row)
