"""The document model every reader produces: a Book is an ordered list of Chapters."""

from __future__ import annotations

from dataclasses import dataclass, field

# What separates the rendered parts of a book (heading from body, chapter from chapter).
HEADING_BODY_SEPARATOR = "\n\n"
CHAPTER_SEPARATOR = "\n\n\n"


@dataclass(frozen=True)
class Chapter:
    """One chapter: its heading exactly as written and its body text without the heading.

    ``parts`` holds higher-level headings (BOOK / PART / VOLUME …) that stand just
    before this chapter's heading; they belong to the text *before* the chapter.
    """

    heading: str
    text: str
    parts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Book:
    id: str
    title: str
    author: str
    language: str
    source: str
    chapters: tuple[Chapter, ...]
    metadata: dict[str, str] = field(default_factory=dict)
    # What the reader dropped or could not interpret (front matter, notes blocks …).
    notes: tuple[str, ...] = ()

    @property
    def word_count(self) -> int:
        return sum(len(c.text.split()) for c in self.chapters)

    def render(self) -> tuple[str, list[int]]:
        """The book as one text, and the offset where each chapter's heading starts.

        ``text[:offsets[i]]`` is everything before chapter ``i`` (including any
        BOOK/PART headings that precede it); ``text[offsets[i]:]`` starts with
        chapter ``i``'s heading.
        """
        pieces: list[str] = []
        offsets: list[int] = []
        length = 0
        for index, chapter in enumerate(self.chapters):
            lead = "" if index == 0 else CHAPTER_SEPARATOR
            for part in chapter.parts:
                lead += part + CHAPTER_SEPARATOR
            pieces.append(lead)
            length += len(lead)
            offsets.append(length)
            body = chapter_start(chapter)
            pieces.append(body)
            length += len(body)
        return "".join(pieces), offsets


def chapter_start(chapter: Chapter) -> str:
    """A chapter as it reads from its heading on: heading, blank line, body."""
    if not chapter.heading:
        return chapter.text
    return chapter.heading + HEADING_BODY_SEPARATOR + chapter.text
