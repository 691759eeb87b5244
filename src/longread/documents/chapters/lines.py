"""The text as lines with their offsets, fast word counts between offsets, and its contents list.

Paragraphs are runs of non-blank lines; every offset whose words are counted is in a
heading or at a line start, so words are counted by whole lines. The contents list runs
from its "CONTENTS" heading to the next front-matter heading or a wide gap of blank lines.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator

from longread.documents.chapters.headings import blank_emphasis

_CONTENTS_HEADING = re.compile(r"^\s*(?:table of\s+)?contents\b[\s.:]*$", re.IGNORECASE)
# This many blank lines in a row end a contents list.
CONTENTS_END_BLANKS = 4
# Lines a contents list names that are not units of the story.
_NOT_STORY = re.compile(
    r"^(?:the\s+)?(?:author'?s\s+|translator'?s\s+)?(?:preface|introduction|contents|table of contents|"
    r"appendix|notes?\b|footnotes|glossary|index|dedication|illustrations|list of|transcriber|the end|"
    r"finis|errata|advertisement|bibliography|acknowledg|foreword|by\s)",
    re.IGNORECASE,
)


def _key(line: str) -> str:
    """A line's letters and digits, lower-cased: what two writings of one title share."""
    return "".join(ch for ch in line.lower() if ch.isalnum())


class _Lines:
    """The text as lines with their offsets; paragraphs are runs of non-blank lines."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.starts = [0, *itertools.accumulate(len(line) + 1 for line in self.lines)][:-1]
        self.is_blank = [not line.strip() for line in self.lines]
        self._contents: list[tuple[int, str]] | None = None

    def listed_before(self, index: int, key: str) -> bool:
        """Whether a line of the contents list before line ``index`` contains ``key`` (names a heading).

        The contents list is looked for in the first half of the text.
        """
        if self._contents is None:
            listed = _contents_lines(self, len(self.lines) // 2)
            self._contents = [(i, _key(self.lines[i])) for i in listed if not self.is_blank[i]]
        return any(key in line_key for line, line_key in self._contents if line < index)

    def blank(self, index: int) -> bool:
        return index >= len(self.lines) or self.is_blank[index]

    def paragraph_end(self, index: int) -> int:
        """Index just past the paragraph that starts at ``index``."""
        while index < len(self.lines) and not self.blank(index):
            index += 1
        return index

    def next_nonblank(self, index: int) -> int:
        while index < len(self.lines) and self.blank(index):
            index += 1
        return index


class _WordIndex:
    """Counts the words between two offsets quickly, by whole lines (every offset asked is in a heading
    or at a line start, and headings are counted separately)."""

    def __init__(self, lines: _Lines) -> None:
        self.line_starts = lines.starts
        self.cumulative = [0, *itertools.accumulate(len(line.split()) for line in lines.lines)]
        self.end = len(lines.text)

    def _line(self, offset: int) -> int:
        return bisect.bisect_right(self.line_starts, offset) - 1

    def between(self, start: int, end: int) -> int:
        if end <= start:
            return 0
        last = self._line(end - 1) + 1 if end < self.end else len(self.cumulative) - 1
        return self.cumulative[last] - self.cumulative[self._line(start)]


def _paragraph_starts(lines: _Lines) -> Iterator[int]:
    """Indices of lines that start a paragraph (a non-blank line after a blank one, or the first)."""
    for index in range(len(lines.lines)):
        if not lines.blank(index) and (index == 0 or lines.blank(index - 1)):
            yield index


def _contents_lines(lines: _Lines, end_line: int) -> range:
    """The lines of the contents list before ``end_line``: from its "CONTENTS" heading to the next
    front-matter heading (illustrations, preface …) or a wide gap of blank lines."""
    end_line = min(end_line, len(lines.lines))
    start = next((i for i in range(end_line) if _CONTENTS_HEADING.match(lines.lines[i])), end_line)
    blanks = 0
    for index in range(start + 1, end_line):
        line = lines.lines[index].strip()
        blanks = blanks + 1 if not line else 0
        if blanks >= CONTENTS_END_BLANKS or (line and _NOT_STORY.match(blank_emphasis(line).strip())):
            return range(start + 1, index)
    return range(start + 1, end_line)
