"""Chapter detection in plain text: find the heading scheme a book uses and split it there.

A heading is a short line standing alone between blank lines whose label the
heading vocabulary (``headings.py``) recognises: "CHAPTER XII.", "Letter 4",
"III. The Night Shadows", "12 The Storm", "PROLOGUE" … Each book uses one
dominant scheme; sequential numbering is the strongest evidence for it, which
is what keeps numbered lists, dates and contents lists from being taken for
chapters; it may start over in each BOOK / PART / VOLUME, which are a level
above and go to ``parts``. Labels may be set in emphasis marks or a frame
("_CHAPTER I_", "[ II ]").

Some units carry no number: stories after a novel, narratives in a novel told by
several hands. They are found by the contents list: an un-numbered entry that
stands alone again as a heading after the list is a unit when it carries a text
of its own, and a level above (like a PART) when its chapters follow it.

The work is split by stage: ``chapter_lines`` (lines and word counts),
``chapter_candidates`` (heading candidates), ``chapter_schemes`` (choosing the
dominant scheme), ``chapter_units`` (un-numbered units the contents list names) and
``chapter_spans`` (spans, parts, regex splitting); this module puts them together
and stays the public entry point.
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
