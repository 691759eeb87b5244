"""Fixed selections runs share: --same-samples-as (pair ids across variants) and --books-list."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.evaluation import RunOptions, read_typed_rows, run_task
from longread.evaluation.selection import SelectionError
from tests.fake_backends import ScriptedLM
from tests.helpers import write_negative_variants


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same three books built with in-book and with out-of-book negatives (other instance counts)."""
    return write_negative_variants(tmp_path_factory.mktemp("variants"))


TASK = ChapterBreakTask(ChapterBreakSettings(prefix_lengths=(32,), suffix_tokens=16))


def pair_ids(run: Path) -> set[str]:
    return {str(row.pair_id) for row in read_typed_rows(run, ChapterBreakTask.row_model)}


def test_same_samples_as_takes_the_pair_ids_of_the_other_variant(
    variants: tuple[Path, Path], tmp_path: Path
) -> None:
    inside, outside = variants
    first = tmp_path / "in-book"
    run_task(TASK, inside, ScriptedLM(), first, RunOptions(show_progress=False, sample=4, sample_seed=3))
    chosen = pair_ids(first)
    assert len(chosen) == 4
    assert json.loads((first / "selection.json").read_text())["pair_ids"] == sorted(chosen)

    second = tmp_path / "out-of-book"
    outcome = run_task(
        TASK, outside, ScriptedLM(), second, RunOptions(show_progress=False, same_samples_as=first)
    )
    assert pair_ids(second) == chosen
    assert outcome.instances == 4 and outcome.selection is not None and outcome.selection.unmatched == []
    rows = read_typed_rows(second, ChapterBreakTask.row_model)
    assert {row.negatives_from for row in rows} == {"out-of-book"}
    # The same boundary: book and chapter of each pair agree across the variants.
    assert {(row.book_id, str(row.pair_id).rsplit("-", 1)[1]) for row in rows} == {
        (row.book_id, str(row.pair_id).rsplit("-", 1)[1]) for row in read_typed_rows(first, TASK.row_model)
    }

    # The other way round, the out-of-book run holds boundaries the in-book data lacks: counted, named.
    wider = tmp_path / "out-of-book-all"
    run_task(TASK, outside, ScriptedLM(), wider, RunOptions(show_progress=False, limit=9))
    back = run_task(
        TASK, inside, ScriptedLM(), tmp_path / "back", RunOptions(show_progress=False, same_samples_as=wider)
    )
    assert back.selection is not None
    assert back.instances + len(back.selection.unmatched) == back.selection.wanted == 9
    assert back.selection.unmatched and all(
        pair not in pair_ids(tmp_path / "back") for pair in back.selection.unmatched
    )
    config = json.loads((tmp_path / "back" / "config.json").read_text())
    assert config["sessions"][-1]["selection"]["unmatched"] == back.selection.unmatched


def test_books_list_keeps_the_books_named_and_names_a_bad_line(
    variants: tuple[Path, Path], tmp_path: Path
) -> None:
    inside, _ = variants
    listing = tmp_path / "books.txt"
    listing.write_text("# the books of the comparison\nc\n\na  # and this one\n", encoding="utf-8")
    run = tmp_path / "run"
    run_task(TASK, inside, ScriptedLM(), run, RunOptions(show_progress=False, books_list=listing))
    assert {row.book_id for row in read_typed_rows(run, TASK.row_model)} == {"a", "c"}

    listing.write_text("a\n\nzzz\n", encoding="utf-8")
    with pytest.raises(SelectionError) as caught:
        run_task(
            TASK, inside, ScriptedLM(), tmp_path / "bad", RunOptions(show_progress=False, books_list=listing)
        )
    message = str(caught.value)
    assert f"{listing}, line 3: book 'zzz' is not in the data" in message and "a, b, c" in message
    assert not (tmp_path / "bad").exists()
