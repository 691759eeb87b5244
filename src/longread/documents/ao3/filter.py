"""The ChapterBreak AO3 filter: which works the benchmark keeps.

Rule: English, General Audiences, at least 10K words by AO3's own count, and more
than 10 chapters (as in the paper); each test can be loosened or switched off.
"""

from __future__ import annotations

from dataclasses import dataclass

from longread.documents.ao3.languages import primary_language
from longread.documents.book import Book


@dataclass(frozen=True)
class AO3Filter:
    """Which works ChapterBreak keeps (paper: English, General Audiences, ≥ 10K words, > 10 chapters).

    ``None`` switches the language or rating test off. Words come from AO3's own
    count (metadata "words") when present, because that is what the paper
    filtered on; otherwise from the text.
    """

    language: str | None = "en"
    rating: str | None = "General Audiences"
    min_words: int = 10_000
    min_chapters: int = 11

    def reject_reason(self, book: Book) -> str | None:
        """None when the work is kept, otherwise why it is not."""
        if self.language is not None and primary_language(book.language) != primary_language(self.language):
            return f"language {book.language!r} is not {self.language!r}"
        if self.rating is not None:
            rating = book.metadata.get("rating")
            if rating is None:
                return f"no rating in the work's metadata (needed {self.rating!r})"
            if rating.casefold() != self.rating.casefold():
                return f"rating {rating!r} is not {self.rating!r}"
        words = _metadata_words(book)
        if words < self.min_words:
            return f"{words:,} words, fewer than {self.min_words:,}"
        if len(book.chapters) < self.min_chapters:
            return f"{len(book.chapters)} chapters, fewer than {self.min_chapters}"
        return None

    def keeps(self, book: Book) -> bool:
        return self.reject_reason(book) is None


def _metadata_words(book: Book) -> int:
    words = book.metadata.get("words", "")
    return int(words) if words.isdigit() else book.word_count
