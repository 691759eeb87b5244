"""Where suffixes may start in a rendered book: chapter headings, 'because' sentences, dialogue."""

from __future__ import annotations

import re
from dataclasses import dataclass

from longread.documents.book import HEADING_BODY_SEPARATOR, Book

# A sentence starts at a paragraph start or after . ! ? (optionally closed by a quote or bracket).
_SENTENCE_START = r"(?:\A|\n[ \t]*|[.!?][\"”’)\]]?[ \t]+\n?[ \t]*)"
CAUSE_PATTERN = re.compile(_SENTENCE_START + r"((?:Because|BECAUSE|Due to|DUE TO|Owing to|OWING TO)\b)")
DIALOGUE_PATTERN = re.compile(_SENTENCE_START + r"([\"“‘«])")


@dataclass(frozen=True)
class RenderedBook:
    """A book as one text, with where each chapter's heading and body start."""

    book: Book
    text: str
    heading_starts: list[int]
    body_starts: list[int]
    body_ends: list[int]

    @classmethod
    def of(cls, book: Book) -> RenderedBook:
        text, heading_starts = book.render()
        body_starts: list[int] = []
        body_ends: list[int] = []
        for start, chapter in zip(heading_starts, book.chapters, strict=True):
            body = start + (len(chapter.heading) + len(HEADING_BODY_SEPARATOR) if chapter.heading else 0)
            body_starts.append(body)
            body_ends.append(body + len(chapter.text))
        return cls(book, text, heading_starts, body_starts, body_ends)

    def chapter_at(self, offset: int) -> int | None:
        """Index of the chapter whose body holds ``offset`` (None inside headings or separators)."""
        lo, hi = 0, len(self.body_starts) - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            if offset < self.body_starts[mid]:
                hi = mid - 1
            elif offset >= self.body_ends[mid]:
                lo = mid + 1
            else:
                return mid
        return None


def sentence_positions(rendered: RenderedBook, suffix_type: str) -> list[int]:
    """Offsets of every sentence start of the given type that lies inside a chapter body."""
    pattern = CAUSE_PATTERN if suffix_type == "cause" else DIALOGUE_PATTERN
    positions: list[int] = []
    for match in pattern.finditer(rendered.text):
        start = match.start(1)
        if rendered.chapter_at(start) is not None:
            positions.append(start)
    return positions
