"""A built NarrativeXL folder as the text it shows of each book (``longread probe memory --data``): the
scenes a model reads, names replaced as the build replaced them; no breaks (NarrativeXL asks none)."""

from __future__ import annotations

from pathlib import Path

from longread.benchmarks.narrativexl.load import load_reading_books
from longread.documents.book import Book, Chapter
from longread.documents.excerpts import BookExcerpts


def narrativexl_excerpts(path: Path) -> list[BookExcerpts]:
    """Every book with read-along questions, its scenes as pieces."""
    return [
        BookExcerpts(
            Book(
                id=book.book_id,
                title=book.book_id,
                author="",
                language="en",
                source=book.source or str(path),
                chapters=tuple(Chapter(heading="", text=scene) for scene in book.scenes),
            ),
            source=str(path),
        )
        for book in load_reading_books(path)
    ]
