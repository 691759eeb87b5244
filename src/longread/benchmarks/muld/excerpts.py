"""A built MuLD NarrativeQA file as the books it shows (``longread probe memory --data``).

Each question's record holds its story whole (``input`` = question + blank line + story). The stories that
are Gutenberg books (``metadata.gutenberg_id``, written by ``longread build muld/narrativeqa``) become one
book each, keyed by that number — the id ``longread probe memory`` gives a Gutenberg book, so a probe of
the data and a probe of the books name the same books and ``--exclude-remembered`` reads either. A story
that is not a Gutenberg book (a film script), or a record built before the id was written, is left out
and named.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from longread.benchmarks.muld.records import MuldRecord, iter_records
from longread.documents.book import Book, Chapter
from longread.documents.excerpts import BookExcerpts
from longread.errors import BadInputError


@dataclass
class MuldBooks:
    """The books of a NarrativeQA file, and the documents left out with why."""

    books: list[BookExcerpts] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)
    """Document id → why it is not probed."""


def is_narrativeqa_file(path: Path) -> bool:
    """Whether ``path`` is a MuLD file whose records name their NarrativeQA document (a first look)."""
    try:
        for _, record in iter_records(path):
            return bool(_metadata(record).get("document_id"))
    except (BadInputError, OSError, ValueError, EOFError):
        return False
    return False


def narrativeqa_books(path: Path) -> MuldBooks:
    """Every Gutenberg book of the file, in the order it first appears; every other document named."""
    found = MuldBooks()
    seen: set[str] = set()
    for line, record in iter_records(path):
        metadata = _metadata(record)
        document = str(metadata.get("document_id") or "")
        question = metadata.get("question")
        if not document or not isinstance(question, str):
            raise BadInputError(
                path,
                f"line {line}: a record without metadata.document_id and metadata.question is not a "
                "NarrativeQA record",
                "give a file `longread build muld/narrativeqa` wrote, or the books themselves",
            )
        number = metadata.get("gutenberg_id")
        if not number:
            kind = metadata.get("kind") or "unknown kind"
            found.left_out[document] = (
                f"not a Gutenberg book ({kind}): no id a probe of books gives"
                if kind != "gutenberg"
                else "built before the Gutenberg id was recorded: build the data again"
            )
            continue
        if number in seen:
            continue
        seen.add(str(number))
        story = record.input[len(question) :].lstrip("\n")
        title = str(metadata.get("title") or number)
        book = Book(id=str(number), title=title, author="", language="en", source=str(path),
                    chapters=(Chapter(heading="", text=story),))  # fmt: skip
        found.books.append(BookExcerpts(book, source=str(path)))
    return found


def _metadata(record: MuldRecord) -> dict[str, object]:
    try:
        value = json.loads(record.metadata or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
