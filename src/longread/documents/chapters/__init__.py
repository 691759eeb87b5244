"""Chapter detection in plain text: find the heading scheme a book uses and split it there.

:func:`detect_chapters` finds the scheme (sequential numbering is the strongest evidence) and the
chapters, or says what it searched for; :func:`split_by_pattern` splits by a given heading regex. The
rules are in :mod:`.detect`, the heading vocabulary in :mod:`.headings`.
"""

from __future__ import annotations

from longread.documents.chapters.candidates import (
    CONTENTS_ENTRY_WORDS,
    MAX_HEADING_LINE,
    MAX_PART_PREAMBLE_WORDS,
    MAX_SHORT_TITLE_CHARS,
    MAX_TITLE_CHARS,
    MAX_TITLE_LINES,
)
from longread.documents.chapters.detect import HINT, SEARCHED_FOR, detect_chapters
from longread.documents.chapters.lines import CONTENTS_END_BLANKS
from longread.documents.chapters.spans import ChapterSpan, spans_to_chapters, split_by_pattern
from longread.documents.chapters.units import MIN_INNER_RUN, MIN_TITLED_UNIT_WORDS

__all__ = [
    "CONTENTS_END_BLANKS",
    "CONTENTS_ENTRY_WORDS",
    "HINT",
    "MAX_HEADING_LINE",
    "MAX_PART_PREAMBLE_WORDS",
    "MAX_SHORT_TITLE_CHARS",
    "MAX_TITLE_CHARS",
    "MAX_TITLE_LINES",
    "MIN_INNER_RUN",
    "MIN_TITLED_UNIT_WORDS",
    "SEARCHED_FOR",
    "ChapterSpan",
    "detect_chapters",
    "spans_to_chapters",
    "split_by_pattern",
]
