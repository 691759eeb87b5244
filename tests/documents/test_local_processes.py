"""Books read in worker processes of this machine: a worker that dies is replaced, its book read again
and the retry noted; a book that kills every worker it meets is reported in its place, and the rest go
on, in the same order and with the same results as in one process."""

from __future__ import annotations

import functools
import os
import signal
from pathlib import Path

import pytest

from longread.documents.book import Book
from longread.documents.bundled import bundled_books
from longread.documents.corpus import LocalProcesses, map_books


def chapters_of(book: Book, *, kills: str, times: int, marks: Path) -> int:
    """The book's chapter count; kills its worker on book ``kills`` the first ``times`` times."""
    if book.id == kills:
        with marks.open("a") as out:
            out.write("x")
        if len(marks.read_text()) <= times:
            os.kill(os.getpid(), signal.SIGKILL)
    return len(book.chapters)


Seen = tuple[str, int | None, str, tuple[str, ...]]
"""An outcome as compared: label, result, error message, notes."""


def _outcomes(per_book: functools.partial[int], workers: int) -> list[Seen]:
    return [
        (outcome.label, outcome.result, str(outcome.error or ""), outcome.notes)
        for outcome in map_books(bundled_books(), per_book, mapper=LocalProcesses(workers))
    ]


@pytest.fixture(scope="module")
def one_process(tmp_path_factory: pytest.TempPathFactory) -> list[Seen]:
    """The bundled books read in this process, no worker killed."""
    marks = tmp_path_factory.mktemp("none") / "marks"
    seen = _outcomes(functools.partial(chapters_of, kills="", times=0, marks=marks), 1)
    assert len(seen) >= 3 and all(result for _, result, _, _ in seen)
    return seen


@pytest.fixture(scope="module")
def victim() -> str:
    """The id of the first bundled book: its worker is the one killed."""
    book_id = next(outcome for outcome in map_books(bundled_books()[:1], lambda book: book.id)).result
    assert book_id
    return book_id


def test_a_dead_worker_is_replaced_its_book_read_again_and_noted(
    one_process: list[Seen], victim: str, tmp_path: Path
) -> None:
    per_book = functools.partial(chapters_of, kills=victim, times=1, marks=tmp_path / "marks")
    pooled = _outcomes(per_book, 2)
    assert [(label, result, error) for label, result, error, _ in pooled] == [
        (label, result, error) for label, result, error, _ in one_process
    ]
    notes = [notes for *_, notes in pooled]
    assert notes[0] == ("its worker process died (signal 9); read again in a new one",)
    assert not any(notes[1:])


def test_a_book_that_kills_every_worker_is_reported_and_the_rest_go_on(
    one_process: list[Seen], victim: str, tmp_path: Path
) -> None:
    per_book = functools.partial(chapters_of, kills=victim, times=99, marks=tmp_path / "marks")
    pooled = _outcomes(per_book, 2)
    label, result, error, _ = pooled[0]
    assert label == one_process[0][0] and result is None
    assert "the 2 worker processes that read it died (signal 9" in error and "--workers" in error
    assert pooled[1:] == one_process[1:]
    assert (tmp_path / "marks").read_text() == "xx"
