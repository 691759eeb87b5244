"""Give every candidate the gold's heading form, so no candidate leaks its position or its book.

``rewrite_heading_numbers``: "CHAPTER XVII. The Storm" as a negative for gold
"CHAPTER III." becomes "CHAPTER III. The Storm": numbers in the heading's label
(roman, arabic, words, ordinals, "9. Chapter 12" forms) take the gold's values in
the gold's forms; the chapter's own title stays.

``conform_heading`` goes further (what the builder uses): the candidate takes the
gold's whole label (keyword, number, punctuation) and keeps its own title only
when the gold has one, re-cased to the gold title's style and ending with the
gold title's closing punctuation — so "CHAPTER II. THE WOOL KING." from another
book becomes "II" for a gold "II", and "II. The Wool King" for a gold
"II. The Storm". Only the text can then tell the candidates apart.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass
from typing import Literal

from longread.documents.chapters.headings import NumberSpan, label_numbers, parse_label


def heading_label(heading: str) -> str | None:
    """The part of a heading up to and including its last label number ("CHAPTER XII" of "CHAPTER XII. X")."""
    spans = label_numbers(heading)
    if not spans:
        return None
    return heading[: spans[-1].end]


@functools.lru_cache(maxsize=1 << 16)  # a build asks it of every later heading for every gold
def is_numbered(heading: str) -> bool:
    return bool(label_numbers(heading))


def rewrite_heading_numbers(heading: str, gold_heading: str) -> str:
    """``heading`` with each label number replaced by the gold's number at the same place.

    The k-th label number takes the gold's k-th (the gold's last when the gold has
    fewer), written in the gold's form. A heading without label numbers is returned
    unchanged; callers only pair numbered with numbered headings.
    """
    gold = label_numbers(gold_heading)
    spans = label_numbers(heading)
    if not gold or not spans:
        return heading
    pieces: list[str] = []
    cursor = 0
    for k, span in enumerate(spans):
        source: NumberSpan = gold[min(k, len(gold) - 1)]
        pieces.append(heading[cursor : span.start])
        pieces.append(gold_heading[source.start : source.end])
        cursor = span.end
    pieces.append(heading[cursor:])
    return "".join(pieces)


def label_values(heading: str) -> list[int]:
    """The values of a heading's label numbers (what a test compares between candidates)."""
    return [span.value for span in label_numbers(heading)]


TitleCase = Literal["upper", "lower", "title", "sentence", "none"]

# Separators between a label and its title ("CHAPTER II. The Storm", "II—THE CAPTAIN").
_SEPARATOR_CHARS = " \t.:;,)]—–-"
_CLOSING_PUNCTUATION = ".!?:;,"
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
# Words a title-cased title leaves in lower case ("The Council with the Munchkins").
_MINOR_WORDS = frozenset(
    {"a", "an", "and", "as", "at", "but", "by", "for", "from", "in", "into"}
    | {"nor", "of", "on", "or", "the", "to", "upon", "with"}
)


@dataclass(frozen=True)
class HeadingParts:
    """A heading cut into label ("CHAPTER II"), separator (". "), title core and closing punctuation."""

    label: str
    separator: str
    title: str
    closing: str

    @classmethod
    def of(cls, heading: str) -> HeadingParts:
        line = heading.strip()
        parsed = parse_label(line)
        label_end = parsed.label_end if parsed is not None else 0
        rest = line[label_end:]
        title = rest.lstrip(_SEPARATOR_CHARS)
        separator = rest[: len(rest) - len(title)]
        core = title.rstrip(_CLOSING_PUNCTUATION + " ")
        if not core:
            # No title: trailing punctuation of the label ("CHAPTER II.") is the separator.
            return cls(line[:label_end], separator, "", "")
        return cls(line[:label_end], separator, core, title[len(core) :].strip())

    def render(self) -> str:
        return (self.label + self.separator + self.title + self.closing).strip()


def title_case_of(title: str) -> TitleCase:
    """How a title is cased: upper, lower, title (major words capitalised), sentence, or none."""
    words = _WORD.findall(title)
    if not words:
        return "none"
    if title.upper() == title:
        return "upper"
    if title.lower() == title:
        return "lower"
    major = [w for i, w in enumerate(words) if i == 0 or w.lower() not in _MINOR_WORDS]
    return "title" if all(w[0].isupper() for w in major) else "sentence"


def recase_title(title: str, case: TitleCase) -> str:
    """``title`` written in ``case`` (a sentence-cased source keeps its proper nouns)."""
    source = title_case_of(title)
    if case in ("none", source):
        return title
    if case == "upper":
        return title.upper()
    if case == "lower":
        return title.lower()
    base = title.lower() if source in ("upper", "title") else title
    if case == "sentence":
        return _upper_first(base)
    position = itertools.count()

    def title_word(match: re.Match[str]) -> str:
        word = match.group(0)
        return word.lower() if next(position) > 0 and word.lower() in _MINOR_WORDS else _upper_first(word)

    return _WORD.sub(title_word, base)


def _upper_first(text: str) -> str:
    for index, char in enumerate(text):
        if char.isalpha():
            return text[:index] + char.upper() + text[index + 1 :]
    return text


@functools.lru_cache(maxsize=1 << 16)  # a build asks it for the same pairs many times
def conform_heading(heading: str, gold_heading: str) -> str | None:
    """``heading`` written in the gold's form, or None when it cannot be (the gold has a title, it has none).

    The result has the gold's label (keyword, number, punctuation). It has a title
    only if the gold has one: then the candidate's own title, re-cased to the gold
    title's case and closed with the gold title's punctuation.
    """
    gold = HeadingParts.of(gold_heading)
    if not gold.title:
        return gold.render()
    own = HeadingParts.of(heading)
    if not own.title:
        return None
    case = title_case_of(gold.title)
    title = recase_title(own.title, case)
    if title_case_of(title) != case:  # e.g. a one-word title cannot look sentence-cased
        return None
    conformed = HeadingParts(gold.label, gold.separator, title, gold.closing)
    # A title must not read as part of the label ("CHAPTER EIGHTEEN" + "ONE NIGHT").
    if HeadingParts.of(conformed.render()) != conformed:
        return None
    return conformed.render()


__all__ = [
    "HeadingParts",
    "conform_heading",
    "heading_label",
    "is_numbered",
    "label_values",
    "recase_title",
    "rewrite_heading_numbers",
    "title_case_of",
]
