"""Heading candidates: every line that could head a chapter, with its title lines and where its body starts.

A candidate starts a paragraph and has a label the heading vocabulary recognises; a
bare number or a special ("PROLOGUE") with words after it is a heading only when those
words read as a title, and a label followed in the same paragraph by more labels is a
contents listing, not a heading. Which candidates are chapters is decided later.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from longread.documents.chapters.headings import CHAPTER_KEYWORDS, HeadingLabel, blank_emphasis, parse_label
from longread.documents.chapters.lines import _key, _Lines, _paragraph_starts, _WordIndex

# A heading line longer than this is prose, not a heading.
MAX_HEADING_LINE = 100
# A title on the lines after the label ("CHAPTER III" / blank / "A Progress") is at most this long.
MAX_TITLE_CHARS = 200
MAX_TITLE_LINES = 3
# A title in sentence case ("In the garden") is accepted only this short.
MAX_SHORT_TITLE_CHARS = 60
# A title ending with a comma is a heading where the contents list names it; a name this short could
# be found anywhere.
MIN_LISTED_TITLE_CHARS = 8
# Fewer words than this before the next heading: a contents entry, not a chapter.
CONTENTS_ENTRY_WORDS = 20
# Part headings may carry an epigraph or an argument before their first chapter, but not a whole text.
MAX_PART_PREAMBLE_WORDS = 400
_WORD = re.compile(r"[^\W\d_][\w'’]*")


@dataclass(frozen=True)
class _Candidate:
    label: HeadingLabel
    heading: str
    heading_start: int
    body_start: int
    stands_alone: bool = True  # a blank line follows the heading (it is not glued to a paragraph)
    words_after: int = 0  # words between this heading and the next candidate

    @property
    def value(self) -> int | None:
        return self.label.number.value if self.label.number else None

    @property
    def scheme(self) -> str:
        if self.label.keyword:
            return self.label.keyword
        assert self.label.number is not None  # a bare label always has a number
        return "bare-" + self.label.number.form.split("-")[0]

    @property
    def tiny(self) -> bool:
        return self.words_after < CONTENTS_ENTRY_WORDS


def _looks_like_title(line: str) -> bool:
    """Titles are capitalised ("A Progress", "RELATES HOW OLIVER …"); prose sentences are not."""
    letters = [c for c in line if c.isalpha()]
    if not letters or line.rstrip()[-1] in ",;":
        return False
    if sum(c.isupper() for c in letters) / len(letters) > 0.8:
        return True
    words: list[str] = _WORD.findall(line)
    significant = [w for w in words if len(w) > 3]
    if not significant:
        return all(w[0].isupper() for w in words)
    return sum(w[0].isupper() for w in significant) / len(significant) >= 0.5


def _starts_title(title: str) -> bool:
    """The rest of a line after a bare number: a title starts with a capital ("I was …" is prose)."""
    first = next((c for c in title if c.isalnum()), "")
    return bool(first) and not first.islower() and _looks_like_title(title)


def _is_label_line(line: str, *, after: HeadingLabel | None = None) -> bool:
    """Whether a line is a heading label of its own (so it cannot be the title of the one before).

    A bare number with words can be the title of the heading ``after`` it belongs to:
    after "CHAPTER I", "I SET OFF UPON MY JOURNEY" (chapters are not numbered twice);
    after a bare "I", "I Am Born" (a chapter is not empty, so a next one would say "II").
    """
    stripped = line.strip()
    if not stripped or len(stripped) > MAX_HEADING_LINE:
        return False
    label = parse_label(stripped)
    if label is None or label.kind == "special":
        return False
    if after is None or after.kind != "chapter" or label.keyword or not label.title:
        return True
    if after.keyword:
        return False
    following = after.number.value + 1 if after.number is not None else None
    return label.number is not None and label.number.value == following


def _title_paragraph(lines: _Lines, start: int, *, label: HeadingLabel) -> int | None:
    """If the paragraph at ``start`` is a heading's title, the index just past it; else None."""
    end = lines.paragraph_end(start)
    block = lines.lines[start:end]
    if not block or len(block) > MAX_TITLE_LINES or end >= len(lines.lines):
        return None
    joined = " ".join(line.strip() for line in block)
    if (
        len(joined) > MAX_TITLE_CHARS
        or _is_label_line(block[0], after=label)
        or not _looks_like_title(joined)
    ):
        return None
    if label.keyword == "letter" and blank_emphasis(joined).strip().startswith("To "):
        return None  # "Letter 1" / "To Mrs. Saville, England.": the address opens the letter
    return end


def _past_first_section_number(lines: _Lines, start: int) -> int | None:
    """After "CHAPTER I", a lone "I" numbers the chapter's first section.

    Returns the index just past that line, or None when the paragraph at ``start`` is not one.
    """
    if start >= len(lines.lines) or not lines.blank(start + 1):
        return None
    label = parse_label(lines.lines[start].strip())
    if label is None or label.keyword or label.title or label.number is None or label.number.value != 1:
        return None
    return start + 1


def _short_title(text: str) -> bool:
    """A title in sentence case ("In which the hero sets out", "At sea"): short, starts with a
    capital letter, and does not run on into a sentence."""
    text = blank_emphasis(text).strip()
    return (
        0 < len(text) <= MAX_SHORT_TITLE_CHARS
        and text[0].isalpha()
        and text[0].isupper()
        and text[-1] not in ",;:-—–"
    )


def _single_line(lines: _Lines, index: int) -> bool:
    return lines.paragraph_end(index) == index + 1


def _split_keyword_label(lines: _Lines, index: int, first: str) -> tuple[HeadingLabel, int] | None:
    """ "CHAPTER" on a line of its own with the number on the next ("CHAPTER" / "I"): the label read
    from both lines, and the index of the number's line."""
    if blank_emphasis(first).strip(" .").lower() not in CHAPTER_KEYWORDS:
        return None
    number_line = index + 1 if not lines.blank(index + 1) else lines.next_nonblank(index + 1)
    if number_line >= len(lines.lines) or number_line > index + 2:
        return None
    label = parse_label(first + " " + lines.lines[number_line].strip())
    # The number stands alone: "CHAPTER" / "I. MISS POLLY" / "II. …" is the head of a contents list.
    return (label, number_line) if label is not None and label.keyword and not label.title else None


def _candidate_at(lines: _Lines, index: int) -> _Candidate | None:
    """A heading starting at line ``index`` (which follows a blank line), or None."""
    first = lines.lines[index].strip()
    if len(first) > MAX_HEADING_LINE:
        return None
    label = parse_label(first)
    if label is None:
        split = _split_keyword_label(lines, index, first)
        return _heading_from(lines, split[1], split[0], start=index) if split else None
    bare = label.kind == "chapter" and not label.keyword
    if label.title and (bare or label.kind == "special") and not _starts_title(label.title):
        # "I went …" or "Conclusion was …" is prose that starts like a label; "I. In which the hero
        # sets out", a short line of its own with the number set off by a stop, is a heading.
        number_end = label.number.end if label.number is not None else len(first)
        set_off = first[number_end : number_end + 1] in (".", ":", "—", "–")
        short = bare and set_off and _single_line(lines, index) and _short_title(label.title)
        if not (short or _title_ending_in_a_comma(lines, index, label)):
            return None
    return _heading_from(lines, index, label)


def _title_ending_in_a_comma(lines: _Lines, index: int, label: HeadingLabel) -> bool:
    """A title after a bare number that ends with a comma ("XII.   THE TITLE OF IT,").

    It is a heading when it goes on over the next lines of its paragraph ("IN WHICH THE SQUIRE,
    HAVING LOST HIS WAY," / "FINDS IT AGAIN") or, standing alone, when the contents list
    (under its "CONTENTS" heading) names it; a line of prose ending with a comma does neither.
    """
    title = label.title
    if label.kind != "chapter" or label.keyword or title.rstrip()[-1:] not in (",", ";"):
        return False
    end = lines.paragraph_end(index)
    if end > index + 1:
        rest = " ".join(line.strip() for line in lines.lines[index + 1 : end])
        return end - index <= MAX_TITLE_LINES and _starts_title(f"{title} {rest}")
    core = title.rstrip(" ,;")
    key = _key(core)
    return _starts_title(core) and len(key) >= MIN_LISTED_TITLE_CHARS and lines.listed_before(index, key)


def _heading_from(
    lines: _Lines, index: int, label: HeadingLabel, *, start: int | None = None
) -> _Candidate | None:
    """The heading whose label ends on line ``index`` (and starts on ``start``, by default the same
    line), with its title lines, and where its body starts."""
    start = index if start is None else start
    bare = label.kind == "chapter" and not label.keyword
    end = lines.paragraph_end(index)
    heading_end = index + 1
    if end > index + 1:
        # More lines in the same paragraph: a contents listing, the heading's title, or the body.
        # A label in the next lines of the paragraph: a contents listing ("CHAPTER I" / "Our Society 1"
        # / "CHAPTER II" …).
        following = lines.lines[index + 1 : min(end, index + 2 + MAX_TITLE_LINES)]
        if any(_is_label_line(line, after=label) for line in following):
            return None
        rest = " ".join(line.strip() for line in lines.lines[index + 1 : end])
        if end - index <= MAX_TITLE_LINES and len(rest) <= MAX_TITLE_CHARS and _looks_like_title(rest):
            heading_end = end
        elif end == index + 2 and not label.title and label.kind == "chapter" and _short_title(rest):
            heading_end = end  # "1" / "In the garden": a number line, then its title line
        elif bare or label.kind in ("special", "title"):
            return None  # a bare number glued to prose is a numbered paragraph, not a chapter
    if heading_end == index + 1 and not label.title:
        title_start = lines.next_nonblank(index + 1)
        if title_start > index + 1:
            title_end = _title_paragraph(lines, title_start, label=label)
            if title_end is not None:
                heading_end = title_end
    body_line = lines.next_nonblank(heading_end)
    if label.keyword and label.kind in ("chapter", "special"):
        # The first section's numeral goes with the heading, so that the body starts with the story.
        section_end = _past_first_section_number(lines, body_line)
        if section_end is not None:
            heading_end = section_end
            body_line = lines.next_nonblank(section_end)
    heading_text = " ".join(line.strip() for line in lines.lines[start:heading_end] if line.strip())
    body_start = lines.starts[body_line] if body_line < len(lines.lines) else len(lines.text)
    if body_line < len(lines.lines):
        body_start += len(lines.lines[body_line]) - len(lines.lines[body_line].lstrip())
    heading = " ".join(heading_text.split())
    return _Candidate(label, heading, lines.starts[start], body_start, stands_alone=lines.blank(heading_end))


def _with_words_after(candidates: list[_Candidate], words: _WordIndex) -> list[_Candidate]:
    ends = [c.heading_start for c in candidates[1:]] + [words.end] if candidates else []
    return [
        replace(c, words_after=words.between(c.body_start, end))
        for c, end in zip(candidates, ends, strict=True)
    ]


def _find_candidates(lines: _Lines, words: _WordIndex) -> list[_Candidate]:
    found: list[_Candidate] = []
    for index in _paragraph_starts(lines):
        candidate = _candidate_at(lines, index)
        if candidate is not None and (not found or candidate.heading_start >= found[-1].body_start):
            found.append(candidate)
    return _with_words_after(found, words)
