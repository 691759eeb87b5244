"""Shortcut rules that must stay at chance on a good ChapterBreak set, and the overlap check.

A rule looks only at the candidates' surface (never at what the text says) and
picks one; if it picks the gold more often than 1 in 6, the set leaks. Ties are
split evenly, so a rule that cannot tell the candidates apart scores exactly
chance instead of profiting from the gold being listed first.

- ``heading_form_rule``: the candidate whose first line has the form of the last
  chapter heading in the prefix (keyword, numeral kind, punctuation, title or
  not, title case).
- ``longest_rule`` / ``shortest_rule``: the candidate with the most / fewest characters.
- ``typography``: the candidate whose typographic marks (straight or curly
  quotes, ``_`` italics, ``--`` or ``—`` dashes) are those of the prefix.
  Out-of-book negatives are rewritten into the gold book's typography
  (``typography.rewrite``); left in their own book's, this rule finds the gold far
  above chance.
- ``overlapping_candidates``: candidates whose book windows overlap another
  candidate's or the prefix's (must be 0).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from longread.benchmarks.chapterbreak.numbering import HeadingParts, TitleCase, title_case_of
from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance
from longread.documents.chapters.headings import parse_label

# A heading is a short line standing alone as a paragraph.
_MAX_HEADING_CHARS = 120


@dataclass(frozen=True)
class HeadingForm:
    """What a heading line looks like, without its number's value or its title's words."""

    keyword: str | None  # "chapter", "letter", "" (bare number), None (no label)
    numeral: str | None  # number form: "roman-upper", "arabic", … or None
    punctuation: tuple[str, str]  # (separator after the label, closing punctuation)
    titled: bool
    case: TitleCase  # of the title, or of the label when untitled

    @classmethod
    def of(cls, line: str) -> HeadingForm:
        line = line.strip()
        label = parse_label(line)
        parts = HeadingParts.of(line)
        return cls(
            keyword=label.keyword if label is not None else None,
            numeral=label.number.form if label is not None and label.number is not None else None,
            punctuation=(parts.separator.strip(), parts.closing),
            titled=bool(parts.title),
            case=title_case_of(parts.title or parts.label),
        )

    def agreement(self, other: HeadingForm) -> int:
        """How many of the five features two forms share."""
        return sum(
            (
                self.keyword == other.keyword,
                self.numeral == other.numeral,
                self.punctuation == other.punctuation,
                self.titled == other.titled,
                self.case == other.case,
            )
        )


def last_heading(prefix: str) -> str | None:
    """The last paragraph of the prefix that is one short line with a chapter label, or None."""
    for paragraph in reversed(prefix.split("\n\n")):
        line = paragraph.strip()
        if line and "\n" not in line and len(line) <= _MAX_HEADING_CHARS:
            label = parse_label(line)
            if label is not None and label.kind != "part":
                return line
    return None


def first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0]


Scorer = Callable[[ChapterBreakInstance], Sequence[float]]


def heading_form_scores(instance: ChapterBreakInstance) -> list[float]:
    """Per candidate: how well its first line matches the prefix's last heading (all 0 without one)."""
    reference = last_heading(instance.prefix)
    if reference is None:
        return [0.0] * len(instance.candidates)
    form = HeadingForm.of(reference)
    return [float(HeadingForm.of(first_line(c)).agreement(form)) for c in instance.candidates]


def longest_scores(instance: ChapterBreakInstance) -> list[float]:
    return [float(len(c)) for c in instance.candidates]


def shortest_scores(instance: ChapterBreakInstance) -> list[float]:
    return [-float(len(c)) for c in instance.candidates]


_TYPOGRAPHY = re.compile(r"--|[\"“”'‘’_—]")


def typography_marks(text: str) -> frozenset[str]:
    return frozenset(_TYPOGRAPHY.findall(text))


def typography_scores(instance: ChapterBreakInstance) -> list[float]:
    """Per candidate: its marks found in the prefix minus its marks the prefix never uses."""
    reference = typography_marks(instance.prefix)
    scores = []
    for candidate in instance.candidates:
        marks = typography_marks(candidate)
        scores.append(float(len(marks & reference) - len(marks - reference)))
    return scores


RULES: dict[str, Scorer] = {
    "heading form": heading_form_scores,
    "longest": longest_scores,
    "shortest": shortest_scores,
    "typography": typography_scores,
}


def gold_credit(scores: Sequence[float]) -> float:
    """The rule's expected hit when it picks the top score and breaks ties at random (gold is index 0)."""
    best = max(scores)
    tied = [index for index, score in enumerate(scores) if score == best]
    return 1.0 / len(tied) if 0 in tied else 0.0


@dataclass(frozen=True)
class RuleResult:
    rule: str
    instances: int
    hits: float  # expected hits with random tie-breaking

    @property
    def accuracy(self) -> float:
        return self.hits / self.instances if self.instances else float("nan")


Window = tuple[str, int, int]


def candidate_windows(instance: ChapterBreakInstance) -> list[Window] | None:
    """(book, first char, end char) of each candidate, gold first; None without recorded sources."""
    if instance.gold_source is None or instance.negative_sources is None:
        return None
    windows = []
    for source, text in zip(
        [instance.gold_source, *instance.negative_sources], instance.candidates, strict=True
    ):
        length = source.char_length if source.char_length is not None else len(text)
        windows.append((source.book_id, source.char_offset, source.char_offset + length))
    return windows


def overlapping_candidates(instance: ChapterBreakInstance) -> int:
    """Candidates whose window overlaps another candidate's or the prefix's window in the same book."""
    windows = candidate_windows(instance)
    if windows is None:
        return 0
    others: list[Window] = list(windows)
    if instance.prefix_start_char is not None and instance.boundary_char is not None:
        others.append((instance.book_id, instance.prefix_start_char, instance.boundary_char))
    count = 0
    for index, (book, start, end) in enumerate(windows):
        if any(b == book and s < end and start < e for k, (b, s, e) in enumerate(others) if k != index):
            count += 1
    return count


def binomial_margin(instances: int, chance: float, z: float = 3.3) -> float:
    """Half-width of the normal-approximation band around chance for ``instances`` trials."""
    return z * math.sqrt(chance * (1.0 - chance) / max(instances, 1))


@dataclass
class LeakTally:
    """Rule hits, overlaps and instance counts over a set of instances; tallies add up."""

    instances: int = 0
    overlapping: int = 0
    hits: dict[str, float] | None = None

    def add(self, instance: ChapterBreakInstance) -> None:
        hits = self.hits if self.hits is not None else {rule: 0.0 for rule in RULES}
        self.hits = hits
        self.instances += 1
        self.overlapping += overlapping_candidates(instance)
        for rule, scorer in RULES.items():
            hits[rule] += gold_credit(scorer(instance))

    def merge(self, other: LeakTally) -> None:
        self.instances += other.instances
        self.overlapping += other.overlapping
        if other.hits is not None:
            hits = self.hits if self.hits is not None else {rule: 0.0 for rule in RULES}
            self.hits = hits
            for rule, value in other.hits.items():
                hits[rule] += value

    def result(self, rule: str) -> RuleResult:
        return RuleResult(rule, self.instances, (self.hits or {}).get(rule, 0.0))


def tally(instances: Iterable[ChapterBreakInstance]) -> LeakTally:
    result = LeakTally()
    for instance in instances:
        result.add(instance)
    return result
