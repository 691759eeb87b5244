"""Chapter spans: where each chosen chapter's heading and body are, with the part headings above it.

A chapter's body ends where the next chapter (or the part heading above it) starts;
part headings directly before a chapter go to its ``parts``. Spans also come from a
user's heading regex, and become ``Chapter`` objects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from longread.documents.book import Chapter
from longread.documents.chapters.candidates import MAX_PART_PREAMBLE_WORDS, _Candidate
from longread.errors import BadInputError, NoChaptersError


@dataclass(frozen=True)
class ChapterSpan:
    heading: str  # as written, whitespace collapsed
    heading_start: int  # offset of the heading in the text given
    body_start: int  # first character of the body (after the heading)
    body_end: int  # end of the body (start of the next unit / end of text)
    parts: tuple[str, ...] = ()  # higher-level headings (BOOK/PART/VOLUME) just before it


def _is_part_above(candidate: _Candidate, chapter: _Candidate) -> bool:
    """An unchosen number alone, with no text of its own, right above a chapter that starts the
    numbering over ("II" / "CHAPTER I") is a part heading."""
    label = candidate.label
    return label.kind == "chapter" and not label.title and candidate.tiny and chapter.value == 1


def _parts_before(candidates: list[_Candidate], position: int, chosen: set[int]) -> list[_Candidate]:
    """The part headings (and titles heading chapters) standing directly before the candidate at
    ``position``.

    A level never directly follows itself, so a second BOOK heading on the way back
    belongs to a contents list, not to this chapter.
    """
    parts: list[_Candidate] = []
    seen: set[str] = set()
    index = position - 1
    chapter = candidates[position]
    while (
        index >= 0
        and id(candidates[index]) not in chosen
        and (
            candidates[index].label.kind in ("part", "title")
            or (index == position - 1 and _is_part_above(candidates[index], chapter))
        )
    ):
        part = candidates[index]
        if part.words_after > MAX_PART_PREAMBLE_WORDS or part.label.keyword in seen:
            break
        seen.add(part.label.keyword)
        parts.insert(0, part)
        index -= 1
    return parts


def _to_spans(text: str, candidates: list[_Candidate], chapters: list[_Candidate]) -> list[ChapterSpan]:
    position = {id(c): i for i, c in enumerate(candidates)}
    chosen = {id(c) for c in chapters}
    parts = [_parts_before(candidates, position[id(c)], chosen) for c in chapters]
    if parts:
        # Before the first unit, a part numbered beyond one ("Third Epoch") ends a contents list.
        parts[0] = [p for p in parts[0] if p.value in (None, 1)]
    spans = []
    for index, chapter in enumerate(chapters):
        if index + 1 < len(chapters):
            following = parts[index + 1]
            body_end = following[0].heading_start if following else chapters[index + 1].heading_start
        else:
            body_end = len(text)
        spans.append(
            ChapterSpan(
                heading=chapter.heading,
                heading_start=chapter.heading_start,
                body_start=min(chapter.body_start, body_end),
                body_end=body_end,
                parts=tuple(p.heading for p in parts[index]),
            )
        )
    return spans


def split_by_pattern(text: str, pattern: str, *, source: str = "<text>") -> list[ChapterSpan]:
    """Chapters start at each line where the user's regex matches (re.MULTILINE)."""
    try:
        regex = re.compile(pattern, re.MULTILINE)
    except re.error as exc:
        raise BadInputError(source, f"invalid heading pattern {pattern!r} ({exc})", "fix the regex") from None
    starts: list[int] = []
    for match in regex.finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        if not starts or line_start > starts[-1]:
            starts.append(line_start)
    if len(starts) < 2:
        found = "never matches" if not starts else "matches only once"
        raise NoChaptersError(
            source, f"the heading pattern {pattern!r} {found}", "check the regex against a heading line"
        )
    spans = []
    for index, start in enumerate(starts):
        line_end = text.find("\n", start)
        line_end = len(text) if line_end < 0 else line_end
        body_end = starts[index + 1] if index + 1 < len(starts) else len(text)
        body_start = min(line_end + 1, body_end)
        spans.append(ChapterSpan(" ".join(text[start:line_end].split()), start, body_start, body_end))
    return spans


_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")


def spans_to_chapters(text: str, spans: list[ChapterSpan]) -> tuple[Chapter, ...]:
    """Chapters (heading, body without the heading, parts) for the spans of ``text``."""
    chapters = []
    for span in spans:
        body = _LEADING_BLANK_LINES.sub("", text[span.body_start : span.body_end]).rstrip()
        chapters.append(Chapter(heading=span.heading, text=body, parts=span.parts))
    return tuple(chapters)
