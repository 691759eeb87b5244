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

import bisect

from longread.documents.chapters.candidates import (
    _Candidate,
    _find_candidates,
)
from longread.documents.chapters.lines import _Lines, _WordIndex
from longread.documents.chapters.schemes import _Scheme, _schemes, _secondary, _specials
from longread.documents.chapters.spans import ChapterSpan, _to_spans
from longread.documents.chapters.units import (
    _inner_runs,
    _listed_entries,
    _listed_titles,
    _merge_titles,
    _units_of_their_own,
)
from longread.errors import NoChaptersError

__all__ = [
    "HINT",
    "SEARCHED_FOR",
    "detect_chapters",
]


SEARCHED_FOR = (
    "looked for CHAPTER/Chapter N, LETTER/STAVE N, numbered heading lines such as 'XII.' or "
    "'12. The Storm', and PROLOGUE/EPILOGUE"
)
HINT = "give a heading regex (--heading-pattern) or check that this is a book with chapters"


def _no_chapters(source: str, candidates: list[_Candidate], schemes: list[_Scheme]) -> NoChaptersError:
    chapter_level = [c for c in candidates if c.label.kind == "chapter"]
    if not chapter_level:
        reason = f"no chapter headings found ({SEARCHED_FOR})"
    elif schemes and all(not s.chapters for s in schemes):
        reason = (
            f"the only chapter headings ({len(chapter_level)}) are in a contents list, "
            "with no text between them"
        )
    elif len(chapter_level) == 1:
        reason = f"only one chapter heading found ({chapter_level[0].heading!r})"
    else:
        numbers = ", ".join(c.heading for c in chapter_level[:4])
        reason = (
            f"{len(chapter_level)} heading-like lines found but their numbering is not a sequence "
            f"(e.g. {numbers}), so they are not taken for chapters"
        )
    return NoChaptersError(source, reason, HINT)


def detect_chapters(text: str, *, source: str = "<text>") -> list[ChapterSpan]:
    """The chapters of a book's text, found by its dominant heading scheme.

    Un-numbered units the contents list names (stories, narratives) are added, or
    stand alone when there is no numbered scheme. Raises NoChaptersError (with the
    reason) when no chapter structure can be found.
    """
    lines = _Lines(text)
    words = _WordIndex(lines)
    candidates = _find_candidates(lines, words)
    schemes = _schemes(candidates, words)
    chapters: list[_Candidate] = []
    if schemes and schemes[0].valid:
        dominant = schemes[0]
        chapters = dominant.chapters + _secondary(dominant, schemes[1:])
        chapters.sort(key=lambda c: c.heading_start)
        chapters = sorted(
            chapters + _inner_runs(candidates, chapters, words, dominant.name), key=lambda c: c.heading_start
        )
        front_end = bisect.bisect_right(lines.starts, chapters[0].heading_start) - 1
    else:
        front_end = len(lines.lines) // 5  # where a contents list may stand
    titles = _listed_titles(lines, _listed_entries(lines, front_end))
    if titles:
        candidates = _merge_titles(candidates, titles, words)
        # The merge recounts words_after, which makes new candidates: find the chosen ones again.
        by_start = {c.heading_start: c for c in candidates}
        chapters = [by_start[c.heading_start] for c in chapters]
    above = [c for c in candidates if c.label.kind in ("part", "title")]
    chapters = sorted(chapters + _units_of_their_own(above, chapters, words), key=lambda c: c.heading_start)
    if len(chapters) < 2:
        raise _no_chapters(source, candidates, schemes)
    chapters = sorted(chapters + _specials(text, words, candidates, chapters), key=lambda c: c.heading_start)
    return _to_spans(text, candidates, chapters)
