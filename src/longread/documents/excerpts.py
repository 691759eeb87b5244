"""A book as a built benchmark shows it: the pieces of its text the benchmark holds, and the breaks it asks
about — what ``longread probe memory --data`` probes instead of the whole book."""

from __future__ import annotations

from dataclasses import dataclass

from longread.documents.book import Book


@dataclass(frozen=True)
class BookExcerpts:
    book: Book
    """The pieces of text as chapters (no passage is drawn across two of them); ``id`` and ``title`` as the
    benchmark names the book."""
    breaks: tuple[tuple[str, str], ...] = ()
    """(the text before, the text after) of every break the benchmark asks about (ChapterBreak: the
    prefix and the true next chapter's opening)."""
    source: str = ""
    """The built data it came from."""
