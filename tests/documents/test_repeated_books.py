"""A book is used once, however often it is given: the same file named twice, or two copies of one book
(one Gutenberg id), give one result and a ``RepeatedBook`` for each repeat, naming where the book was read
first; a copy that failed claims nothing, so a later good copy is still used."""

from __future__ import annotations

from pathlib import Path

from longread.documents.book import Book
from longread.documents.bundled import resolve_bundled
from longread.documents.corpus import map_books
from longread.documents.reader import RepeatedBook
from longread.errors import BadInputError

FRANKENSTEIN = resolve_bundled("bundled:pg84")[0]
TREASURE_ISLAND = resolve_bundled("bundled:pg120")[0]


def copies(tmp_path: Path) -> tuple[Path, Path]:
    """Frankenstein twice, in two folders: ``a/`` sorts before ``b/``."""
    made = []
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        copy = tmp_path / folder / "pg84.txt.gz"
        copy.write_bytes(FRANKENSTEIN.read_bytes())
        made.append(copy)
    return made[0], made[1]


def chapters(book: Book, *, failing: str = "") -> int:
    if failing and failing in book.source:
        raise BadInputError(book.source, "no usable chapter", "")
    return len(book.chapters)


def test_the_second_copy_of_a_book_is_left_out_naming_the_first(tmp_path: Path) -> None:
    first, second = copies(tmp_path)
    outcomes = list(map_books([second, TREASURE_ISLAND, first], chapters))
    assert [(o.label, o.book_id, o.result is not None) for o in outcomes] == [  # the names' sorted order
        (str(TREASURE_ISLAND), "120", True),
        (str(first), "84", True),
        (str(second), "84", False),
    ]
    repeat = outcomes[2].error
    assert isinstance(repeat, RepeatedBook)
    assert f"book 84 left out: a book with this id was read already from {first}" in str(repeat)
    assert "rename one" in str(repeat)


def test_the_same_file_given_twice_is_read_once() -> None:
    outcomes = list(map_books([FRANKENSTEIN, FRANKENSTEIN], chapters))
    assert [o.result is not None for o in outcomes] == [True, False]
    assert isinstance(outcomes[1].error, RepeatedBook)
    assert "book 84 left out: this file was read already" in str(outcomes[1].error)


def test_a_copy_that_failed_claims_nothing(tmp_path: Path) -> None:
    first, second = copies(tmp_path)
    failing = f"{tmp_path.name}/a/"
    outcomes = list(map_books([first, second], lambda book: chapters(book, failing=failing)))
    assert [type(o.error).__name__ if o.error else "used" for o in outcomes] == ["BadInputError", "used"]
    assert outcomes[1].label == str(second) and outcomes[1].result
