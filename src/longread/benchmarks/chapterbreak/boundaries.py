"""Where suffixes may start in a rendered book: chapter headings, causal cues, dialogue.

Each boundary carries the rule that found it (recorded in every instance as
``boundary_rule``):

- ``chapter-heading``: a chapter's heading starts the suffix.
- ``cause-cue/sentence-start``, ``cause-cue/mid-sentence``: "because", "due to" or
  "owing to" opening a clause or phrase, at a sentence start *or mid-sentence*
  ("…he left the house | because he could not bear…"),
  as the paper's cause suffixes "contain 'because', 'due to', 'owing to'" at their
  beginning. Not taken: the cue inside a word or hyphenated compound, "due to" /
  "owing to" meaning *owed to* ("the money due to him") or *scheduled to*
  ("due to arrive").
- ``dialogue-quote``: a sentence starting with an opening quotation mark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from longread.documents.book import HEADING_BODY_SEPARATOR, Book

CHAPTER_RULE = "chapter-heading"
CAUSE_RULE = "cause-cue"
DIALOGUE_RULE = "dialogue-quote"
BOUNDARY_RULES = (CHAPTER_RULE, CAUSE_RULE, DIALOGUE_RULE)

# A sentence starts at a paragraph start or after . ! ? (optionally closed by a quote or bracket).
_SENTENCE_START = r"(?:\A|\n[ \t]*|[.!?][\"”’)\]]?[ \t]+\n?[ \t]*)"
DIALOGUE_PATTERN = re.compile(_SENTENCE_START + r"([\"“‘«])")
# The cue opens a clause: after whitespace, an opening quote or bracket, a dash or an
# italics mark — never inside a word or a hyphenated compound ("self-because").
_CLAUSE_OPENING = r"(?:(?<=\s)|(?<=[\"“‘'(\[—–_])|(?<=--)|\A)"
# "due to him" (owed), "due to arrive" (scheduled): the cue does not give a cause there.
_NOT_CAUSAL_AFTER = (
    r"(?:him|her|me|you|us|them|thee|one|be|been|arrive|leave|start|sail|return|come|go|appear|"
    r"begin|meet|take|have|marry|the\s+crown)\b"
)
CAUSE_PATTERN = re.compile(
    _CLAUSE_OPENING + r"(because\b|(?:due|owing)\s+to\b(?!\s+" + _NOT_CAUSAL_AFTER + r"))",
    re.IGNORECASE,
)


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


_BEFORE_SENTENCE = re.compile(r"(?:\n[ \t]*|[.!?][\"”’)\]]?[ \t]+\n?[ \t]*)[\"“‘(_]?\Z")


def cause_rule_at(text: str, offset: int) -> str:
    """``cause-cue/sentence-start`` or ``cause-cue/mid-sentence`` for a cue at ``offset``."""
    # The start of the text counts as a paragraph start.
    before = ("\n" if offset <= 16 else "") + text[max(0, offset - 16) : offset]
    at_start = _BEFORE_SENTENCE.search(before) is not None
    return f"{CAUSE_RULE}/{'sentence-start' if at_start else 'mid-sentence'}"


def sentence_positions(rendered: RenderedBook, suffix_type: str) -> list[tuple[int, str]]:
    """(offset, boundary rule) of every cause cue or dialogue sentence start inside a chapter body."""
    pattern = CAUSE_PATTERN if suffix_type == "cause" else DIALOGUE_PATTERN
    positions: list[tuple[int, str]] = []
    for match in pattern.finditer(rendered.text):
        start = match.start(1)
        if rendered.chapter_at(start) is None:
            continue
        rule = cause_rule_at(rendered.text, start) if suffix_type == "cause" else DIALOGUE_RULE
        positions.append((start, rule))
    return positions
