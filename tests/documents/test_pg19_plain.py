"""The PG-19 folder reader and the plain-text reader."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from longread.documents.book import Book
from longread.documents.gutenberg import read_gutenberg
from longread.documents.pg19 import iter_pg19, read_pg19_file
from longread.documents.plain import read_plain
from longread.errors import BadInputError, NoChaptersError
from tests.helpers import GUTENBERG as CORPUS
from tests.helpers import needs_shared as needs_corpus

PROSE = "The rain came down on the harbour all night, and the ships rocked at their moorings.\n"


def make_pg19(root: Path, books: dict[str, list[str]]) -> dict[str, Book]:
    """A tiny PG-19 folder from real corpus books, stripped by the Gutenberg reader."""
    read: dict[str, Book] = {}
    rows = []
    for split, ids in books.items():
        (root / split).mkdir(parents=True)
        for book_id in ids:
            book = read_gutenberg(CORPUS / f"pg{book_id}.txt.gz")
            (root / split / f"{book_id}.txt").write_text(book.render()[0], encoding="utf-8")
            rows.append([book_id, book.title, "1850", f"http://www.gutenberg.org/ebooks/{book_id}"])
            read[book_id] = book
    with (root / "metadata.csv").open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return read


@needs_corpus
def test_iter_pg19_reads_every_split_in_order(tmp_path: Path) -> None:
    originals = make_pg19(tmp_path, {"train": ["1342", "84"], "test": ["98"]})
    (tmp_path / "validation").mkdir()
    (tmp_path / "validation" / "5.txt").write_text(PROSE * 40, encoding="utf-8")  # no chapters
    items = list(iter_pg19(tmp_path))
    assert [type(item).__name__ for item in items] == ["Book", "Book", "Book", "NoChaptersError"]
    books = [item for item in items if isinstance(item, Book)]
    assert [(b.metadata["split"], b.id) for b in books] == [
        ("test", "98"),
        ("train", "84"),
        ("train", "1342"),
    ]
    for book in books:
        original = originals[book.id]
        assert book.title == original.title
        assert book.metadata == {"split": book.metadata["split"], "publication_date": "1850"}
        assert [c.heading for c in book.chapters] == [c.heading for c in original.chapters]
        assert [c.parts for c in book.chapters] == [c.parts for c in original.chapters]
    assert isinstance(items[-1], NoChaptersError) and "5.txt" in str(items[-1])


@needs_corpus
def test_iter_pg19_splits_and_single_file(tmp_path: Path) -> None:
    make_pg19(tmp_path, {"train": ["1342"], "test": ["84"]})
    assert [b.id for b in iter_pg19(tmp_path, splits=["test"]) if isinstance(b, Book)] == ["84"]
    book = read_pg19_file(tmp_path / "train" / "1342.txt")
    assert (book.id, book.title, book.metadata["split"]) == ("1342", "Pride and Prejudice", "train")
    assert len(book.chapters) == 61


def test_pg19_folder_errors(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match=r"metadata\.csv"):
        list(iter_pg19(tmp_path))
    (tmp_path / "metadata.csv").write_text("1,A Book,1900,http://x\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="unknown split"):
        list(iter_pg19(tmp_path, splits=["dev"]))
    with pytest.raises(BadInputError, match="none of the split folders"):
        list(iter_pg19(tmp_path))
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "1.txt").write_text("", encoding="utf-8")
    [item] = list(iter_pg19(tmp_path))
    assert isinstance(item, BadInputError) and "empty" in str(item)
    with pytest.raises(BadInputError, match=r"metadata\.csv"):
        read_pg19_file(tmp_path / "elsewhere" / "x" / "1.txt")


def test_book_missing_from_metadata_is_noted(tmp_path: Path) -> None:
    (tmp_path / "train").mkdir()
    (tmp_path / "metadata.csv").write_text("id,short_book_title,publication_date,url\n", encoding="utf-8")
    text = "\n\n".join(f"CHAPTER {n}\n\n{PROSE * 5}" for n in ("I", "II", "III"))
    (tmp_path / "train" / "7.txt").write_text(text, encoding="utf-8")
    book = read_pg19_file(tmp_path / "train" / "7.txt")
    assert book.title == "7" and any("not in metadata.csv" in note for note in book.notes)


def test_read_plain_detects_chapters(tmp_path: Path) -> None:
    text = "My Story\n\n\n" + "\n\n".join(f"Chapter {n}\n\n{PROSE * 3}" for n in (1, 2, 3))
    path = tmp_path / "story.txt"
    path.write_text(text, encoding="utf-8")
    book = read_plain(path, title="My Story")
    assert (book.id, book.title) == ("story", "My Story")
    assert [c.heading for c in book.chapters] == ["Chapter 1", "Chapter 2", "Chapter 3"]
    assert book.chapters[0].text == (PROSE * 3).strip()


def test_read_plain_with_pattern(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("# one\nfirst text\n# two\nsecond text\n", encoding="utf-8")
    book = read_plain(path, heading_pattern=r"^# ", book_id="n1")
    assert book.id == "n1"
    assert [(c.heading, c.text) for c in book.chapters] == [("# one", "first text"), ("# two", "second text")]


def test_read_plain_without_chapters(tmp_path: Path) -> None:
    path = tmp_path / "flat.txt"
    path.write_text(PROSE * 30, encoding="utf-8")
    with pytest.raises(NoChaptersError, match=r"flat\.txt"):
        read_plain(path)
