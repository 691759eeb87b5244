"""Choosing the heading scheme: group chapter candidates by scheme, drop contents lists and outliers, rank.

Sequential numbering is the strongest evidence for a scheme; a numbering that starts
over inside another scheme's chapters is a section level, unless BOOK / PART / VOLUME
headings start it over (then it is the chapters, and the other scheme their sections). A
run going back to 1 inside a scheme with no such heading above it (verses, letters) is
dropped when the running numbering resumes after it. Other keyword runs wholly
before or after the dominant one (Letters 1-4, then Chapters) join it, and a prologue
before the first chapter or an epilogue after the last is kept when it has a text.
"""

from __future__ import annotations

import bisect
import itertools
import statistics
from dataclasses import dataclass

from longread.documents.chapters.candidates import CONTENTS_ENTRY_WORDS, _Candidate
from longread.documents.chapters.lines import _WordIndex

# A numbered verse or letter inside a chapter is at most this long (a chapter is longer).
MAX_INNER_UNIT_WORDS = 500
_LATE_SPECIALS = ("epilogue", "conclusion", "finale", "afterword", "postscript")


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


def _nested_in(inner: list[_Candidate], outer: list[_Candidate], words: _WordIndex, above: list[int]) -> bool:
    """Whether ``inner`` numbers sections inside ``outer``'s chapters: it starts over at each of them.

    Not when each restart comes right under an outer heading with no text of its own
    ("II" / "CHAPTER I"): then the outer headings are parts and ``inner`` the chapters.
    A restart under a BOOK / PART / VOLUME heading (at ``above``) is explained by
    that level, not by ``outer``: "BOOK II" / "CHAPTER I" starts the chapters over even
    when the last section of BOOK I stands between.
    """
    outer_starts = [c.heading_start for c in outer]
    restarts = 0
    at_outer = 0
    right_under = 0
    for previous, current in itertools.pairwise(inner):
        if previous.value is None or current.value is None or current.value > previous.value:
            continue
        if _between(above, previous, current):
            continue
        restarts += 1
        last_outer = bisect.bisect_left(outer_starts, current.heading_start) - 1
        between = last_outer + 1 - bisect.bisect_right(outer_starts, previous.heading_start)
        at_outer += between > 0
        if between > 0:
            heading = outer[last_outer]
            right_under += words.between(heading.body_start, current.heading_start) < CONTENTS_ENTRY_WORDS
    nested = restarts >= 2 and at_outer * 10 >= restarts * 7
    return nested and (right_under * 10 < restarts * 7 or _starts_over_under_parts(outer, above))


def _starts_over_under_parts(members: list[_Candidate], above: list[int]) -> bool:
    """Whether a numbering starts over, and only ever under a BOOK / PART / VOLUME heading: then it is
    the chapter level of "BOOK I" / "I." / "1", and a number right under each of its headings
    numbers the chapter's first section."""
    restarts = [
        (previous, current)
        for previous, current in itertools.pairwise(members)
        if previous.value is not None and current.value is not None and current.value <= previous.value
    ]
    return bool(restarts) and all(_between(above, previous, current) for previous, current in restarts)


def _levels_above(candidates: list[_Candidate]) -> list[int]:
    """Where a level above the chapters starts: BOOK / PART / VOLUME headings, and a number standing
    alone with no text of its own right above a CHAPTER that starts the numbering over ("II" /
    "CHAPTER I"; above a bare "1" it may as well be a chapter whose first section follows)."""
    starts = []
    for index, candidate in enumerate(candidates):
        label = candidate.label
        following = candidates[index + 1] if index + 1 < len(candidates) else None
        bare_part = (
            label.kind == "chapter"
            and not label.keyword
            and not label.title
            and candidate.tiny
            and following is not None
            and bool(following.label.keyword)
            and following.value == 1
        )
        if label.kind == "part" or bare_part:
            starts.append(candidate.heading_start)
    return starts


def _between(starts: list[int], after: _Candidate, before: _Candidate) -> bool:
    """Whether one of ``starts`` lies between two headings."""
    return bisect.bisect_left(starts, before.heading_start) > bisect.bisect_right(starts, after.heading_start)


def _resumption(members: list[_Candidate], start: int, main_last: int, words: _WordIndex) -> int | None:
    """Where the running numbering resumes after a run that went back to 1 at ``start``, or None.

    The run counts on from 1 (I, II, III); the numbering resumes at the last heading that
    continues the one before the run (… IV, I, II, III, V). When that number would also
    continue the run (… IV, I, II, III, IV, V), the run is taken for sections only if each of
    its units is short, as verses or letters are, and the chapters before it are not; otherwise
    it is more likely a level whose heading was not recognised (a part starting the chapters
    over). A run that goes on to the last heading closes the last chapter (returns
    ``len(members)``) on the same terms.
    """
    inner_last = 1
    found = None
    for index in range(start + 1, len(members)):
        value = members[index].value
        if value is None:
            break
        if value == main_last + 1 and (
            value != inner_last + 1 or _short_among_long(members, start, index, words)
        ):
            found = index
        if value != inner_last + 1:
            break
        inner_last = value
    else:
        if len(members) - start >= 2 and _short_among_long(members, start, len(members), words):
            return len(members)
    return found


def _unit_words(members: list[_Candidate], index: int, words: _WordIndex) -> int:
    """Words from a heading's body to the next member (or the end of the text)."""
    end = members[index + 1].heading_start if index + 1 < len(members) else words.end
    return words.between(members[index].body_start, end)


def _short_among_long(members: list[_Candidate], start: int, end: int, words: _WordIndex) -> bool:
    """Whether every unit from ``members[start]`` up to ``members[end]`` is short (a verse, a letter)
    while the chapters before them are longer (by their median)."""
    if any(_unit_words(members, i, words) > MAX_INNER_UNIT_WORDS for i in range(start, end)):
        return False
    before = [_unit_words(members, i, words) for i in range(start)]
    return bool(before) and statistics.median(before) > MAX_INNER_UNIT_WORDS


def _numbers_on(member: _Candidate, inner_last: int, main_last: int | None) -> bool:
    """Whether a heading goes on with a dropped run's numbers (letters IV, V in the chapter after the
    one that held I-III) rather than with the chapters'."""
    return member.value == inner_last + 1 and (main_last is None or member.value != main_last + 1)


def _drop_inner_restarts(members: list[_Candidate], above: list[int], words: _WordIndex) -> list[_Candidate]:
    """Drop runs that go back to 1 inside a chapter: numbered verses or letters (… III, IV, I, II, III,
    V …). A run going back to 1 under a BOOK / PART / VOLUME heading starts the chapters over;
    one without such a heading is not a chapter level when the running numbering resumes after it
    (or, short, it closes the last chapter). Letters numbered on in a later chapter (… V, IV, V,
    VI …) continue the run, not the chapters.
    """
    kept: list[_Candidate] = []
    main_last: int | None = None
    inner_last: int | None = None  # the last number of the runs dropped so far
    index = 0
    while index < len(members):
        member = members[index]
        inside = main_last is not None and bool(kept) and not _between(above, kept[-1], member)
        inner_last = inner_last if inside else None  # a BOOK heading ends the letters before it
        if inside and inner_last is not None and _numbers_on(member, inner_last, main_last):
            inner_last += 1
            index += 1
            continue
        if inside and member.value == 1 and main_last is not None:
            resumes = _resumption(members, index, main_last, words)
            if resumes is not None:
                inner_last = members[resumes - 1].value
                index = resumes
                continue
        kept.append(member)
        main_last = member.value if member.value is not None else main_last
        index += 1
    return kept


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
    above = _levels_above(candidates)
    schemes = []
    for name, members in by_name.items():
        kept, dropped = _drop_contents(_last_unnumbered(members), words)
        kept = _drop_outliers(_drop_inner_restarts(kept, above, words))
        schemes.append(_Scheme(name, kept, _sequential_count(kept), dropped))
    # A numbering that restarts inside another scheme's chapters is a section level, not chapters.
    schemes = [
        scheme
        for scheme in schemes
        if not any(
            other is not scheme and other.valid and _nested_in(scheme.chapters, other.chapters, words, above)
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
