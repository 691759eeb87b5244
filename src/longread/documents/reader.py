"""Pick the right reader for a file and turn any source into Books.

``read_book(path)`` is the one-book entry point; ``read_source`` yields every book
of a source (a JSONL of works holds many) and turns per-book failures into
``BadInputError`` values so a corpus-wide job can keep going.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from longread.documents.book import Book
from longread.documents.bundled import PREFIX, is_bundled_name, resolve_bundled
from longread.errors import BadInputError, LongreadError
from longread.files import read_head, strip_compression_suffix

Format = Literal["auto", "gutenberg", "pg19", "plain", "ao3-html", "epub", "jsonl"]
FORMATS: tuple[str, ...] = ("auto", "gutenberg", "pg19", "plain", "ao3-html", "epub", "jsonl")
# Which collection a reader's books come from: a benchmark's split and the first part of its ids.
# A Project Gutenberg file is "gutenberg", a file of a PG-19 split folder "pg19", a plain text "plain";
# ChapterBreak's official layout (pg19 and ao3 only) files Gutenberg and plain books under pg19.
COLLECTION_OF_FORMAT = {
    "gutenberg": "gutenberg",
    "pg19": "pg19",
    "plain": "plain",
    "ao3-html": "ao3",
    "epub": "ao3",
    "jsonl": "pg19",
}
_GUTENBERG_SIGNS = (b"Project Gutenberg", b"PROJECT GUTENBERG", b"Project gutenberg")


@dataclass(frozen=True)
class ReadOptions:
    format: Format = "auto"
    heading_pattern: str | None = None  # plain text: a regex that matches chapter heading lines
    encoding: str | None = None
    exclude: tuple[tuple[str, str], ...] = ()
    """Books left out on purpose, as (book id, why): each read is an :class:`ExcludedBook` outcome, not a
    book (``--exclude-remembered``)."""

    def excluded(self, book_id: str) -> str | None:
        """Why the book is left out, or None."""
        return next((why for excluded, why in self.exclude if excluded == book_id), None)


class ExcludedBook(BadInputError):
    """A book left out on purpose (its id is in :attr:`ReadOptions.exclude`); reports list it apart from
    books that could not be used."""


class RepeatedBook(ExcludedBook):
    """A book read a second time (the same file given twice, or two copies of one book): only its first
    reading is used, and reports list the others as left out, naming where it was read first."""


def guess_format(path: Path) -> Format:
    name = strip_compression_suffix(path.name.lower())
    if name.endswith((".html", ".htm")):
        return "ao3-html"
    if name.endswith(".epub"):
        return "epub"
    if name.endswith(".jsonl"):
        return "jsonl"
    if (
        path.parent.name in ("train", "validation", "test")
        and (path.parent.parent / "metadata.csv").is_file()
    ):
        return "pg19"
    head = read_head(path, 60000)
    if any(sign in head for sign in _GUTENBERG_SIGNS):
        return "gutenberg"
    return "plain"


def read_path(path: Path, options: ReadOptions = ReadOptions()) -> Iterator[Book | BadInputError]:
    """Every book in one file, failures as values (one bad work does not hide the rest)."""
    try:
        fmt = options.format if options.format != "auto" else guess_format(path)
        if options.heading_pattern is not None and fmt == "gutenberg":
            fmt = "plain"  # an explicit heading pattern always wins over guessing
        if fmt == "jsonl":
            from longread.documents.jsonl_works import iter_jsonl_works

            for item in iter_jsonl_works(path):
                yield item if isinstance(item, BadInputError) else _tag(item, fmt)
            return
        yield _tag(_read_single(path, fmt, options), fmt)
    except BadInputError as exc:
        yield exc
    except LongreadError as exc:
        yield BadInputError(path, str(exc))


def _read_single(path: Path, fmt: str, options: ReadOptions) -> Book:
    if fmt == "gutenberg":
        from longread.documents.gutenberg import read_gutenberg

        return read_gutenberg(path, encoding=options.encoding)
    if fmt == "pg19":
        from longread.documents.pg19 import read_pg19_file

        return read_pg19_file(path)
    if fmt == "plain":
        from longread.documents.plain import read_plain

        return read_plain(path, heading_pattern=options.heading_pattern, encoding=options.encoding)
    if fmt == "ao3-html":
        from longread.documents.ao3 import read_ao3_html

        return read_ao3_html(path)
    if fmt == "epub":
        from longread.documents.epub import read_epub

        return read_epub(path)
    raise BadInputError(path, f"unknown format {fmt!r}", f"use one of {', '.join(FORMATS)}")


def _tag(book: Book, fmt: str) -> Book:
    if "collection" in book.metadata:
        return book
    return replace(book, metadata={**book.metadata, "collection": COLLECTION_OF_FORMAT.get(fmt, "pg19")})


def read_book(path: str | Path, *, format: Format = "auto", heading_pattern: str | None = None) -> Book:
    """Read one book; the reader is picked from the file (see ``guess_format``). ``bundled:pg84`` names a
    novel shipped with longread."""
    if is_bundled_name(path):
        named = resolve_bundled(path)
        if len(named) != 1:
            raise BadInputError(path, f"names {len(named)} books, not one", f"name one, e.g. {PREFIX}pg84")
        path = named[0]
    items = list(read_path(Path(path), ReadOptions(format=format, heading_pattern=heading_pattern)))
    for item in items:
        if isinstance(item, BadInputError):
            raise item
    if len(items) != 1:
        raise BadInputError(path, f"holds {len(items)} works, not one", "use longread.read_books() for it")
    book = items[0]
    assert isinstance(book, Book)
    return book


def read_bytes_source(label: str, data: bytes, options: ReadOptions) -> Iterator[Book | BadInputError]:
    """Read an archive member: its bytes go to a temporary file named like the member."""
    folder = tempfile.mkdtemp(prefix="longread-member-")
    # The temporary file keeps the member's own name, so ids taken from file names stay right.
    path = Path(folder) / Path(label).name
    try:
        path.write_bytes(data)
        for item in read_path(path, options):
            if isinstance(item, BadInputError):
                yield BadInputError(label, item.problem, item.hint, line=item.line, item=item.item)
            else:
                yield replace(item, source=label)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
