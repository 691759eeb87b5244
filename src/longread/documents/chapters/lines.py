"""The text as lines with their offsets, and fast word counts between offsets.

Paragraphs are runs of non-blank lines; every offset whose words are counted is in a
heading or at a line start, so words are counted by whole lines.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator


class _Lines:
    """The text as lines with their offsets; paragraphs are runs of non-blank lines."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.starts = [0, *itertools.accumulate(len(line) + 1 for line in self.lines)][:-1]
        self.is_blank = [not line.strip() for line in self.lines]

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
