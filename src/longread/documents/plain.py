"""Plain-text books: chapters by a user's heading regex, or found by chapter detection."""

from __future__ import annotations

from pathlib import Path

from longread.documents.ao3 import UNKNOWN_LANGUAGE
from longread.documents.book import Book
from longread.documents.chapters import detect_chapters, spans_to_chapters, split_by_pattern
from longread.files import read_text, strip_compression_suffix


def read_plain(
    path: str | Path,
    *,
    heading_pattern: str | None = None,
    encoding: str | None = None,
    book_id: str | None = None,
    title: str | None = None,
) -> Book:
    """Read a plain-text book; ``heading_pattern`` (a regex matched per line) marks chapter headings.

    Without a pattern the chapters are detected (see ``chapters.detect_chapters``);
    a text with no recognisable chapters raises NoChaptersError.
    """
    path = Path(path)
    text = read_text(path, encoding)
    if heading_pattern is not None:
        spans = split_by_pattern(text, heading_pattern, source=str(path))
    else:
        spans = detect_chapters(text, source=str(path))
    stem = Path(strip_compression_suffix(path.name)).stem
    notes = []
    front = text[: spans[0].heading_start].strip()
    if front:
        notes.append(f"dropped {len(front):,} characters before the first chapter heading")
    return Book(
        id=book_id or stem,
        title=title or stem,
        author="Unknown",
        language=UNKNOWN_LANGUAGE,
        source=str(path),
        chapters=spans_to_chapters(text, spans),
        notes=tuple(notes),
    )
