"""JSONL of works with explicit chapters: reading, per-line errors, and the write → read round trip."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from longread.documents.book import Book, Chapter
from longread.documents.jsonl_works import iter_jsonl_works, write_jsonl_works
from longread.errors import BadInputError

GOOD = {
    "id": "w1",
    "title": "The Glass Orchard",
    "author": "Ada Quince",
    "language": "en",
    "metadata": {"rating": "General Audiences", "words": 12000, "complete": True},
    "chapters": [
        {"heading": "Chapter 1", "text": "Glass trees grew.\n\nThey rang in the wind."},
        {"heading": "Chapter 2", "text": "Winter came."},
    ],
}


def _write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_reads_one_book_per_line(tmp_path: Path) -> None:
    second = {"id": "w2", "title": "Short", "chapters": [{"heading": "", "text": "Only text."}]}
    path = _write_lines(tmp_path / "works.jsonl", [json.dumps(GOOD), "", json.dumps(second)])
    books = list(iter_jsonl_works(path))
    assert all(isinstance(book, Book) for book in books)
    first, other = books
    assert isinstance(first, Book) and isinstance(other, Book)
    assert first.id == "w1" and first.title == "The Glass Orchard" and first.author == "Ada Quince"
    assert first.chapters == (
        Chapter("Chapter 1", "Glass trees grew.\n\nThey rang in the wind."),
        Chapter("Chapter 2", "Winter came."),
    )
    # Scalars in metadata become strings, because Book.metadata is dict[str, str].
    assert first.metadata == {"rating": "General Audiences", "words": "12000", "complete": "true"}
    assert (other.author, other.language, other.metadata, other.source) == ("", "", {}, "jsonl")


def test_compressed_file_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "works.jsonl.gz"
    path.write_bytes(gzip.compress(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\r\n"))
    (book,) = iter_jsonl_works(path)
    assert isinstance(book, Book) and book.id == "w1"


BAD_LINES = [
    ("{not json", r"line 2: not valid JSON \(Expecting property name"),
    ("[1, 2]", r"line 2: a JSON list where an object was expected"),
    (json.dumps({"title": "x", "chapters": [{"heading": "", "text": "t"}]}), r"line 2: missing field 'id'"),
    (json.dumps({"id": "b", "title": "x"}), r"line 2 \(b\): missing field 'chapters'"),
    (json.dumps({"id": "b", "title": "x", "chapters": []}), r"line 2 \(b\): 'chapters' is empty"),
    (
        json.dumps({"id": 7, "title": "x", "chapters": [{"heading": "", "text": "t"}]}),
        r"line 2: id: .*\(got 7\)",
    ),
    (
        json.dumps({"id": "b", "title": "x", "chapters": [{"heading": 3, "text": "t"}]}),
        r"line 2 \(b\): chapters\[0\]\.heading: Input should be a valid string \(got 3\)",
    ),
    (
        json.dumps({"id": "b", "title": "x", "chapters": [{"heading": "h", "text": "  "}]}),
        r"line 2 \(b\): chapters\[0\]\.text: the chapter text is empty",
    ),
    (
        json.dumps({"id": "b", "title": "x", "chapters": "all of it"}),
        r"chapters: Input should be a valid list",
    ),
]


@pytest.mark.parametrize(("line", "message"), BAD_LINES, ids=[m.split(":")[-1][:30] for _, m in BAD_LINES])
def test_bad_line_is_reported_and_reading_goes_on(tmp_path: Path, line: str, message: str) -> None:
    third = {**GOOD, "id": "w3"}
    path = _write_lines(tmp_path / "works.jsonl", [json.dumps(GOOD), line, json.dumps(third)])
    first, bad, last = iter_jsonl_works(path)
    assert isinstance(first, Book) and isinstance(last, Book) and last.id == "w3"
    assert isinstance(bad, BadInputError)
    assert bad.line == 2
    assert str(bad).startswith(str(path))
    assert "fix or remove the line" in str(bad)
    assert bad.path == str(path)
    assert re.search(message, str(bad)), str(bad)


def test_invalid_utf8_line(tmp_path: Path) -> None:
    path = tmp_path / "works.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b'\n{"id": "\xff"}\n')
    good, bad = iter_jsonl_works(path)
    assert isinstance(good, Book)
    assert isinstance(bad, BadInputError) and "line 2: not valid UTF-8" in str(bad)


def test_empty_file_raises(tmp_path: Path) -> None:
    path = tmp_path / "works.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(BadInputError, match=r"works\.jsonl: file is empty"):
        list(iter_jsonl_works(path))


def test_binary_file_raises(tmp_path: Path) -> None:
    path = tmp_path / "works.jsonl"
    path.write_bytes(b"\x00\x01\x02 binary")
    with pytest.raises(BadInputError, match=r"works\.jsonl: binary file"):
        list(iter_jsonl_works(path))


def test_writer_refuses_a_book_the_reader_would_refuse(tmp_path: Path) -> None:
    book = Book("empty", "T", "", "en", "x", chapters=())
    with pytest.raises(BadInputError, match=r"\(empty\): 'chapters' is empty"):
        write_jsonl_works([book], tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()  # atomic: nothing half-written is left


# --- round trip ---------------------------------------------------------------------------

# Any unicode (quotes, backslashes, newlines, U+2028, emoji) except surrogates, which UTF-8 cannot hold.
_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=60)
_BODY = _TEXT.filter(lambda text: bool(text.strip()))
_CHAPTERS = st.lists(
    st.builds(Chapter, heading=_TEXT, text=_BODY, parts=st.lists(_TEXT, max_size=2).map(tuple)),
    min_size=1,
    max_size=4,
)
_BOOKS = st.builds(
    Book,
    id=_TEXT.filter(bool),
    title=_TEXT,
    author=_TEXT,
    language=st.sampled_from(["en", "de", ""]),
    source=st.sampled_from(["jsonl", "ao3-html"]),
    chapters=_CHAPTERS.map(tuple),
    metadata=st.dictionaries(_TEXT, _TEXT, max_size=3),
    notes=st.lists(_TEXT, max_size=2).map(tuple),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(books=st.lists(_BOOKS, min_size=1, max_size=3))
def test_write_then_read_round_trips(tmp_path: Path, books: list[Book]) -> None:
    path = tmp_path / "works.jsonl"
    assert write_jsonl_works(books, path) == len(books)
    assert list(iter_jsonl_works(path)) == books
