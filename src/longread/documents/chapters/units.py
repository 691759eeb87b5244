"""Units beside the numbered chapters: un-numbered units the contents list names, and inner numbered runs.

An un-numbered entry of the contents list that stands alone again as a heading after
the list is a unit when it carries a text of its own (a story, a narrative), and a level
above (like a PART) when its chapters follow it. A titled numbered run filling one gap
between two chapters ("1. THE NARRATIVE OF …") is a run of units too.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from longread.documents.chapters.candidates import (
    CONTENTS_ENTRY_WORDS,
    MAX_HEADING_LINE,
    MAX_PART_PREAMBLE_WORDS,
    _Candidate,
    _heading_from,
    _looks_like_title,
    _with_words_after,
)
from longread.documents.chapters.headings import HeadingLabel, blank_emphasis, parse_label
from longread.documents.chapters.lines import (
    _NOT_STORY,
    _contents_lines,
    _key,
    _Lines,
    _paragraph_starts,
    _WordIndex,
)

# An un-numbered titled unit (a story, a narrative) has at least this many words; fewer is an epigraph.
MIN_TITLED_UNIT_WORDS = 150
# A run of numbered units between two chapters ("1. THE NARRATIVE OF …") needs this many members.
MIN_INNER_RUN = 3
# A contents entry's page number and its leader: "Beyond the Bayou ........ 123".
_PAGE_NUMBER = re.compile(r"(?:\s*[.·…_]{2,}\s*|\s{2,}|\s*[.·…]\s+)(?:\d{1,4}|[ivxlc]{1,7})\s*$")
_QUOTES = "\"'“‘«"


@dataclass(frozen=True)
class _Entry:
    line: int  # where the entry is first written (in the contents list)
    words: int


def _listed_entries(lines: _Lines, end_line: int) -> dict[str, _Entry]:
    """The un-numbered, title-like entries of the contents list before ``end_line``."""
    entries: dict[str, _Entry] = {}
    chapter_titles: set[str] = set()
    previous: HeadingLabel | None = None
    for index in _contents_lines(lines, end_line):
        line = _PAGE_NUMBER.sub("", blank_emphasis(lines.lines[index])).strip()
        if not line:
            continue
        after_chapter_label = previous is not None and previous.kind == "chapter" and not previous.title
        previous = parse_label(line)
        if not _could_be_title(line):
            continue
        key = _key(line)
        if after_chapter_label:
            # "CHAPTER IV" / "Jonathan Harker's Journal": the title of a numbered chapter, not a unit.
            chapter_titles.add(key)
        elif len(key) >= 4 and key not in entries:
            entries[key] = _Entry(index, len(line.split()))
    return {key: entry for key, entry in entries.items() if key not in chapter_titles}


def _could_be_title(line: str) -> bool:
    """An un-numbered heading: short, capitalised, no label, not front matter, not a quotation."""
    if not line or len(line) > MAX_HEADING_LINE or line[0] in _QUOTES or parse_label(line) is not None:
        return False
    return not _NOT_STORY.match(line) and _looks_like_title(line)


def _entry_named(key: str, entries: dict[str, _Entry], long_keys: list[str]) -> str | None:
    """The entry a heading line repeats: the same words, or a long entry it starts with
    ("THE STORY CONTINUED BY FREDERICK FAIRLIE, ESQ., OF LIMMERIDGE HOUSE")."""
    if key in entries:
        return key
    return next((entry for entry in long_keys if key.startswith(entry)), None)


def _listed_titles(lines: _Lines, entries: dict[str, _Entry]) -> list[_Candidate]:
    """Headings the contents list names without a number, where they stand alone again after the list."""
    if not entries:
        return []
    long_keys = [key for key, entry in entries.items() if entry.words >= 4]
    found: list[_Candidate] = []
    for index in _paragraph_starts(lines):
        line = blank_emphasis(lines.lines[index]).strip()
        if len(line) > MAX_HEADING_LINE:
            continue
        entry = _entry_named(_key(line), entries, long_keys)
        if entry is None or index <= entries[entry].line or not _could_be_title(line):
            continue
        label = HeadingLabel("title", entry, None, len(line), line)
        candidate = _heading_from(lines, index, label)
        if candidate is not None:
            found.append(candidate)
    return found


def _merge_titles(
    candidates: list[_Candidate], titles: list[_Candidate], words: _WordIndex
) -> list[_Candidate]:
    """Candidates and titled headings in text order; a title inside another heading is dropped."""
    starts = [c.heading_start for c in candidates]
    kept = []
    for title in titles:
        before = bisect.bisect_right(starts, title.heading_start) - 1
        if before >= 0 and title.heading_start < candidates[before].body_start:
            continue
        kept.append(title)
    merged = sorted(candidates + kept, key=lambda c: c.heading_start)
    return _with_words_after(merged, words)


def _units_of_their_own(
    headings: list[_Candidate], chapters: list[_Candidate], words: _WordIndex
) -> list[_Candidate]:
    """The part and title headings that carry a text of their own instead of chapters
    (a story, a narrative or a BOOK without chapters).

    One between two chapters whose numbers follow each other is a section inside the
    first. One followed closely by a chapter numbered 1 heads those chapters; one before the
    first chapter is front matter, unless that chapter is numbered beyond 1 ("THE STORY
    BEGUN BY …" / text / "II"): then it stands for chapter 1. A part heading may carry an
    epigraph or an argument, so its own text must be longer than that to make it a unit.
    """
    starts = [c.heading_start for c in chapters]
    units = []
    for index, heading in enumerate(headings):
        following = bisect.bisect_right(starts, heading.heading_start)
        chapter = chapters[following] if following < len(chapters) else None
        if following > 0 and chapter is not None and _continues(chapters[following - 1], chapter):
            continue  # a unit here would break "IV … V": a section heading inside chapter IV
        if chapter is not None:
            preamble = words.between(heading.body_start, chapter.heading_start)
            # Another heading on the way ("SECOND NARRATIVE" / text / "THIRD NARRATIVE" / "CHAPTER I"):
            # this one heads the chapter only if its own text is a short preamble too.
            own_short = heading.words_after >= preamble or heading.words_after < MIN_TITLED_UNIT_WORDS
            if chapter.value in (None, 1) and preamble <= MAX_PART_PREAMBLE_WORDS and own_short:
                continue
            if following == 0 and chapters[0].value in (None, 1):
                continue
        end = min(
            chapter.heading_start if chapter is not None else words.end,
            headings[index + 1].heading_start if index + 1 < len(headings) else words.end,
        )
        needed = MIN_TITLED_UNIT_WORDS if heading.label.kind == "title" else MAX_PART_PREAMBLE_WORDS
        # "BOOK I. (Folio), CHAPTER III. (Fin-Back).—Under this head …" opens a paragraph: not a unit.
        if heading.stands_alone and words.between(heading.body_start, end) >= needed:
            units.append(heading)
    return units


def _continues(before: _Candidate, after: _Candidate) -> bool:
    return before.value is not None and after.value == before.value + 1


def _inner_runs(
    candidates: list[_Candidate], chapters: list[_Candidate], words: _WordIndex, scheme: str
) -> list[_Candidate]:
    """A titled numbered run of units filling one gap between two chapters ("1. THE NARRATIVE OF …",
    "2. …"). Runs in many gaps are sections of the chapters, not units; so is a run numbered like
    the chapters (``scheme``), which going back to 1 breaks their sequence (letters inside one)."""
    chosen = {id(c) for c in chapters}
    starts = [c.heading_start for c in chapters]
    by_gap: dict[tuple[int, str], list[_Candidate]] = {}
    for candidate in candidates:
        label = candidate.label
        if label.kind != "chapter" or id(candidate) in chosen or not label.title or candidate.value is None:
            continue
        if candidate.scheme == scheme:
            continue
        gap = bisect.bisect_right(starts, candidate.heading_start)
        if 0 < gap < len(starts):
            by_gap.setdefault((gap, candidate.scheme), []).append(candidate)
    runs = []
    for (gap, _), members in by_gap.items():
        if len(members) < MIN_INNER_RUN or [m.value for m in members] != list(range(1, len(members) + 1)):
            continue
        ends = [m.heading_start for m in members[1:]] + [starts[gap]]
        counts = [words.between(m.body_start, end) for m, end in zip(members, ends, strict=True)]
        # Units, not a list: none is a bare entry, and on average each is a text of its own.
        if min(counts) >= CONTENTS_ENTRY_WORDS and sum(counts) >= MIN_TITLED_UNIT_WORDS * len(counts):
            runs.append(members)
    return [member for run in runs for member in run] if len(runs) <= 2 else []
