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
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from longread.documents.book import Chapter
from longread.documents.headings import CHAPTER_KEYWORDS, HeadingLabel, blank_emphasis, parse_label
from longread.errors import BadInputError, NoChaptersError

# A heading line longer than this is prose, not a heading.
MAX_HEADING_LINE = 100
# A title on the lines after the label ("CHAPTER III" / blank / "A Progress") is at most this long.
MAX_TITLE_CHARS = 200
MAX_TITLE_LINES = 3
# A title in sentence case ("In the garden") is accepted only this short.
MAX_SHORT_TITLE_CHARS = 60
# Fewer words than this before the next heading: a contents entry, not a chapter.
CONTENTS_ENTRY_WORDS = 20
# Part headings may carry an epigraph or an argument before their first chapter, but not a whole text.
MAX_PART_PREAMBLE_WORDS = 400
# An un-numbered titled unit (a story, a narrative) has at least this many words; fewer is an epigraph.
MIN_TITLED_UNIT_WORDS = 150
# A run of numbered units between two chapters ("1. THE NARRATIVE OF …") needs this many members.
MIN_INNER_RUN = 3
SEARCHED_FOR = (
    "looked for CHAPTER/Chapter N, LETTER/STAVE N, numbered heading lines such as 'XII.' or "
    "'12. The Storm', and PROLOGUE/EPILOGUE"
)
HINT = "give a heading regex (--heading-pattern) or check that this is a book with chapters"
_LATE_SPECIALS = ("epilogue", "conclusion", "finale", "afterword", "postscript")
_WORD = re.compile(r"[^\W\d_][\w'’]*")
_CONTENTS_HEADING = re.compile(r"^\s*(?:table of\s+)?contents\b[\s.:]*$", re.IGNORECASE)
# This many blank lines in a row end a contents list.
CONTENTS_END_BLANKS = 4
# A contents entry's page number and its leader: "Beyond the Bayou ........ 123".
_PAGE_NUMBER = re.compile(r"(?:\s*[.·…_]{2,}\s*|\s{2,}|\s*[.·…]\s+)(?:\d{1,4}|[ivxlc]{1,7})\s*$")
_QUOTES = "\"'“‘«"
# Lines a contents list names that are not units of the story.
_NOT_STORY = re.compile(
    r"^(?:the\s+)?(?:author'?s\s+|translator'?s\s+)?(?:preface|introduction|contents|table of contents|"
    r"appendix|notes?\b|footnotes|glossary|index|dedication|illustrations|list of|transcriber|the end|"
    r"finis|errata|advertisement|bibliography|acknowledg|foreword|by\s)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ChapterSpan:
    heading: str  # as written, whitespace collapsed
    heading_start: int  # offset of the heading in the text given
    body_start: int  # first character of the body (after the heading)
    body_end: int  # end of the body (start of the next unit / end of text)
    parts: tuple[str, ...] = ()  # higher-level headings (BOOK/PART/VOLUME) just before it


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


# ---------------------------------------------------------------------------
# finding heading candidates


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
        if not (bare and set_off and _single_line(lines, index) and _short_title(label.title)):
            return None
    return _heading_from(lines, index, label)


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


# ---------------------------------------------------------------------------
# un-numbered units named by the contents list


def _key(line: str) -> str:
    return "".join(ch for ch in line.lower() if ch.isalnum())


@dataclass(frozen=True)
class _Entry:
    line: int  # where the entry is first written (in the contents list)
    words: int


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
    candidates: list[_Candidate], chapters: list[_Candidate], words: _WordIndex
) -> list[_Candidate]:
    """A titled numbered run of units filling one gap between two chapters ("1. THE NARRATIVE OF …",
    "2. …"). Runs in many gaps are sections of the chapters, not units."""
    chosen = {id(c) for c in chapters}
    starts = [c.heading_start for c in chapters]
    by_gap: dict[tuple[int, str], list[_Candidate]] = {}
    for candidate in candidates:
        label = candidate.label
        if label.kind != "chapter" or id(candidate) in chosen or not label.title or candidate.value is None:
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


# ---------------------------------------------------------------------------
# choosing the scheme


def _drop_contents(candidates: list[_Candidate], words: _WordIndex) -> tuple[list[_Candidate], int]:
    """Remove contents-list entries: runs of headings of one scheme with (almost) no text between them.

    Text is counted up to the next heading of the same scheme, so that a chapter heading
    followed at once by its first section number ("CHAPTER IV" / "I") is not taken for one.
    The last entry of a contents list is followed by whatever comes next (a preface …),
    so it is recognised by the numbering starting over right after it.
    """
    ends = [c.heading_start for c in candidates[1:]] + [words.end]
    tiny = [
        words.between(c.body_start, end) < CONTENTS_ENTRY_WORDS
        for c, end in zip(candidates, ends, strict=True)
    ]
    kept: list[_Candidate] = []
    dropped = 0
    index = 0
    while index < len(candidates):
        run_end = index
        while run_end < len(candidates) and tiny[run_end]:
            run_end += 1
        if run_end - index >= 2:
            dropped += run_end - index
            first_value = candidates[index].value
            if run_end + 1 < len(candidates):
                last_entry, following = candidates[run_end], candidates[run_end + 1]
                if (
                    first_value is not None
                    and last_entry.value is not None
                    and following.value is not None
                    and following.value <= first_value < last_entry.value
                ):
                    run_end += 1
                    dropped += 1
            index = run_end
            continue
        kept.append(candidates[index])
        index += 1
    return kept, dropped


def _drop_outliers(candidates: list[_Candidate]) -> list[_Candidate]:
    """Drop a heading whose number breaks a sequence its neighbours continue (a numbered list item)."""
    kept: list[_Candidate] = []
    for index, candidate in enumerate(candidates):
        if kept and index + 1 < len(candidates):
            before, after = kept[-1].value, candidates[index + 1].value
            value = candidate.value
            numbered = before is not None and after is not None and value is not None
            if numbered and after == before + 1 and value != before + 1:  # type: ignore[operator]
                continue
        kept.append(candidate)
    return kept


def _sequential_count(candidates: list[_Candidate]) -> int:
    """How many headings continue the numbering (n after n-1, or 1 starting it over)."""
    count = 0
    previous: int | None = None
    for candidate in candidates:
        value = candidate.value
        if value is None or value == 1 or (previous is not None and value == previous + 1):
            count += 1
        previous = value if value is not None else (previous + 1 if previous is not None else None)
    return count


@dataclass
class _Scheme:
    name: str
    chapters: list[_Candidate]
    sequential: int
    contents_entries: int

    @property
    def valid(self) -> bool:
        needed = 3 if self.name == "bare-arabic" else 2
        return self.sequential >= needed and self.sequential * 2 >= len(self.chapters)

    def score(self) -> tuple[int, int, int]:
        # Sequential headings first; a keyword ("CHAPTER") beats a bare number on a tie.
        return (self.sequential, 0 if self.name.startswith("bare-") else 1, len(self.chapters))


def _nested_in(inner: list[_Candidate], outer: list[_Candidate], words: _WordIndex) -> bool:
    """Whether ``inner`` numbers sections inside ``outer``'s chapters: it starts over at each of them.

    Not when each restart comes right under an outer heading with no text of its own
    ("II" / "CHAPTER I"): then the outer headings are parts and ``inner`` the chapters.
    """
    outer_starts = [c.heading_start for c in outer]
    restarts = 0
    at_outer = 0
    right_under = 0
    for previous, current in itertools.pairwise(inner):
        if previous.value is None or current.value is None or current.value > previous.value:
            continue
        restarts += 1
        last_outer = bisect.bisect_left(outer_starts, current.heading_start) - 1
        between = last_outer + 1 - bisect.bisect_right(outer_starts, previous.heading_start)
        at_outer += between > 0
        if between > 0:
            heading = outer[last_outer]
            right_under += words.between(heading.body_start, current.heading_start) < CONTENTS_ENTRY_WORDS
    nested = restarts >= 2 and at_outer * 10 >= restarts * 7
    return nested and right_under * 10 < restarts * 7


def _is_part_above(candidate: _Candidate, chapter: _Candidate) -> bool:
    """An unchosen number alone, with no text of its own, right above a chapter that starts the
    numbering over ("II" / "CHAPTER I") is a part heading."""
    label = candidate.label
    return label.kind == "chapter" and not label.title and candidate.tiny and chapter.value == 1


def _last_unnumbered(members: list[_Candidate]) -> list[_Candidate]:
    """ "CHAPTER THE LAST" counts only after the numbered chapters (elsewhere it is a contents entry)."""
    numbered = [c.heading_start for c in members if c.value is not None]
    last = max(numbered, default=-1)
    return [c for c in members if c.value is not None or c.heading_start > last]


def _schemes(candidates: list[_Candidate], words: _WordIndex) -> list[_Scheme]:
    by_name: dict[str, list[_Candidate]] = {}
    for candidate in candidates:
        if candidate.label.kind == "chapter":
            by_name.setdefault(candidate.scheme, []).append(candidate)
    schemes = []
    for name, members in by_name.items():
        kept, dropped = _drop_contents(_last_unnumbered(members), words)
        kept = _drop_outliers(kept)
        schemes.append(_Scheme(name, kept, _sequential_count(kept), dropped))
    # A numbering that restarts inside another scheme's chapters is a section level, not chapters.
    schemes = [
        scheme
        for scheme in schemes
        if not any(
            other is not scheme and other.valid and _nested_in(scheme.chapters, other.chapters, words)
            for other in schemes
        )
    ]
    return sorted(schemes, key=lambda s: s.score(), reverse=True)


def _secondary(dominant: _Scheme, others: list[_Scheme]) -> list[_Candidate]:
    """Other numbered runs that sit wholly before or after the dominant one (Letters 1-4, then Chapters)."""
    first = dominant.chapters[0].heading_start
    last = dominant.chapters[-1].heading_start
    extra: list[_Candidate] = []
    for scheme in others:
        if scheme.name.startswith("bare-") or not scheme.valid:
            continue
        starts = [c.heading_start for c in scheme.chapters]
        if all(s < first for s in starts) or all(s > last for s in starts):
            extra.extend(scheme.chapters)
    return extra


def _specials(
    text: str, words: _WordIndex, candidates: list[_Candidate], chapters: list[_Candidate]
) -> list[_Candidate]:
    """Prologue / prelude before the first chapter, epilogue / conclusion / finale after the last.

    Their length is measured up to the next chapter, not the next heading: an epilogue
    may itself be split into numbered sections.
    """
    first, last = chapters[0].heading_start, chapters[-1].heading_start
    starts = [c.heading_start for c in chapters]
    chosen = []
    for candidate in candidates:
        if candidate.label.kind != "special":
            continue
        following = bisect.bisect_right(starts, candidate.heading_start)
        end = starts[following] if following < len(starts) else len(text)
        if words.between(candidate.body_start, end) < CONTENTS_ENTRY_WORDS:
            continue
        late = candidate.label.keyword in _LATE_SPECIALS
        if (late and candidate.heading_start > last) or (not late and candidate.heading_start < first):
            chosen.append(candidate)
    if chosen and chosen[0].heading_start < first:
        # Only the prologue nearest the first chapter: earlier ones are contents entries.
        early = [c for c in chosen if c.heading_start < first]
        chosen = [early[-1], *[c for c in chosen if c.heading_start > first]]
    return chosen


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


# ---------------------------------------------------------------------------
# public interface


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
        chapters = sorted(chapters + _inner_runs(candidates, chapters, words), key=lambda c: c.heading_start)
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
