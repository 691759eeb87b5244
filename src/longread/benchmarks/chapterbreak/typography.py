"""A book's typographic style, and rewriting another book's text into it.

Out-of-book negatives come from other books; left as they are, their quotes,
dashes and italics marks tell them from the gold (``leaks.typography_scores``).
Each is rewritten into the gold book's style before it is cut to the suffix
budget, so the out-of-book variant is easier only through what the text says.

A style is learnt once per book from counts over its whole rendered text
(majority rule, deterministic):

- double quotes: straight ``"`` or curly ``“ ”``;
- single quotes and apostrophes: straight ``'`` or curly ``‘ ’``;
- dashes: ``--`` or ``—``;
- italics: ``_word_`` marks used (at least ``ITALICS_PER_100K`` per 100,000 characters) or not;
- dialogue: opened with double quotes (``“…”``, ``‘…’`` nested) or single ones (``‘…’``, ``“…”`` nested).

A feature the book never shows (no quotes at all, no dashes) is left as it is.
The rewrite touches only those marks: straight quotes become curly by their
context (after a space, a line start, an opening bracket or a dash they open,
else they close; ``'em``, ``'tis`` … stay apostrophes), curly ones become
straight, ``--`` ↔ ``—``, double and single quotation marks swap when the two
books open dialogue differently, and ``_`` italics marks are dropped for a book
without them. What was changed is recorded (``CandidateSource.typography``).

Italics cannot be added to a text that has none, so ``build`` draws a book with
italics its negatives from other books with italics (when 20 or more feed the
pool), and a dialogue negative must open with the gold's quotation mark.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Set
from dataclasses import dataclass
from typing import Literal

QuoteStyle = Literal["straight", "curly"]
DialogueStyle = Literal["double", "single"]
DashStyle = Literal["--", "—"]

# A book uses ``_`` italics when it has at least this many ``_`` per 100,000 characters.
ITALICS_PER_100K = 5.0

_MARKS = re.compile(r"-{2,}|[\"“”'‘’_—]")
# After these (or at the start of the text) a straight quote opens.
_OPENS_AFTER = frozenset(" \t\n([{—-_“‘")
# A straight single quote opening a quotation (not an apostrophe inside a word).
_STRAIGHT_SINGLE_OPENER = re.compile(r"(?:\A|(?<=[\s(\[{—_-]))'(?=[^\W\d_])")
# Elisions written with a leading apostrophe ('em, 'tis, 'twas …): an apostrophe, not an opening quote.
_ELISION = re.compile(r"'(?:em|tis|twas|twere|twill|twould|ee|im|un|n|er|ud|ave|ow|e|ere)\b", re.IGNORECASE)


def _majority(straight: int, curly: int) -> QuoteStyle | None:
    if straight == curly == 0:
        return None
    return "curly" if curly > straight else "straight"


@dataclass(frozen=True)
class Typography:
    """How a book writes quotes, dashes and italics (None: the book never shows the feature)."""

    double_quotes: QuoteStyle | None
    single_quotes: QuoteStyle | None
    dashes: DashStyle | None
    italics: bool
    # which quotes open dialogue ("double": “…” with ‘…’ nested; "single": ‘…’ with “…” nested)
    dialogue: DialogueStyle | None = None

    @classmethod
    def of(cls, text: str) -> Typography:
        hyphen_pairs = sum(len(m.group()) // 2 for m in re.finditer(r"-{2,}", text))
        em = text.count("—")
        dashes: DashStyle | None = None if hyphen_pairs == em == 0 else ("—" if em > hyphen_pairs else "--")
        rate = text.count("_") * 100_000 / max(len(text), 1)
        double_openers = text.count("“") + text.count('"') / 2
        single_openers = text.count("‘") + len(_STRAIGHT_SINGLE_OPENER.findall(text))
        dialogue: DialogueStyle | None = None
        if double_openers or single_openers:
            dialogue = "single" if single_openers > double_openers else "double"
        return cls(
            double_quotes=_majority(text.count('"'), text.count("“") + text.count("”")),
            single_quotes=_majority(text.count("'"), text.count("‘") + text.count("’")),
            dashes=dashes,
            italics=rate >= ITALICS_PER_100K,
            dialogue=dialogue,
        )

    def __str__(self) -> str:
        return (
            f"double quotes {self.double_quotes}, single quotes {self.single_quotes}, "
            f"dashes {self.dashes}, italics {'_' if self.italics else 'none'}, dialogue {self.dialogue}"
        )


@dataclass(frozen=True)
class Rewritten:
    """A text rewritten into a style, with where it changed and a map back to the original's offsets."""

    text: str
    # Every change: (its offset in the new text, its name, e.g. "dashes —→--"), in order.
    edits: tuple[tuple[int, str], ...] = ()
    # Pieces whose length changed: (new start, new end, old start, old end), in order.
    pieces: tuple[tuple[int, int, int, int], ...] = ()

    def original_length(self, kept: int) -> int:
        """Characters of the original text that the first ``kept`` characters of the rewrite cover."""
        index = bisect.bisect_right([p[0] for p in self.pieces], kept - 1) - 1
        if index < 0:
            return kept
        _, new_end, _, old_end = self.pieces[index]
        if kept < new_end:  # inside a changed piece: count all of it (windows err on the long side)
            return old_end
        return old_end + (kept - new_end)

    def changes(self, kept: int | None = None) -> set[str]:
        """Names of the changes within the first ``kept`` characters (all of them by default)."""
        limit = len(self.text) if kept is None else kept
        return {name for at, name in self.edits if at < limit}


CHANGE_ORDER = (
    "dialogue quotes double→single",
    "dialogue quotes single→double",
    "double quotes straight→curly",
    "double quotes curly→straight",
    "single quotes straight→curly",
    "single quotes curly→straight",
    "dashes --→—",
    "dashes —→--",
    "italics _ removed",
)


def describe(changes: Set[str]) -> str | None:
    """The changes in a fixed order, ``"; "``-joined (None for none)."""
    return "; ".join(c for c in CHANGE_ORDER if c in changes) or None


def rewrite(text: str, style: Typography, source: Typography | None = None) -> Rewritten:
    """``text`` (from a book of style ``source``, when known) with its quotes, dashes and
    italics marks in ``style``.

    When the two books open dialogue with different quotes, double and single
    quotation marks swap (an apostrophe stays one: a single closing mark swaps only
    while a swapped quotation is open and no letter follows it).
    """
    quotes = _Quotes(style, source)
    out: list[str] = []
    pieces: list[tuple[int, int, int, int]] = []
    edits: list[tuple[int, str]] = []
    position = 0  # in text
    length = 0  # of the output so far
    for match in _MARKS.finditer(text):
        mark = match.group()
        replacement, change = (
            quotes.replace(text, match.start(), mark) if mark in _QUOTE_MARKS else _replace(mark, style)
        )
        if replacement == mark:
            continue
        between = text[position : match.start()]
        out.append(between)
        length += len(between)
        edits.append((length, change))
        out.append(replacement)
        if len(replacement) != len(mark):
            pieces.append((length, length + len(replacement), match.start(), match.end()))
        length += len(replacement)
        position = match.end()
    if not edits:
        return Rewritten(text)
    out.append(text[position:])
    return Rewritten("".join(out), tuple(edits), tuple(pieces))


def _opens(text: str, at: int) -> bool:
    """Whether a straight quote at ``at`` opens: at the start, after a space, bracket or dash,
    or right after another straight quote that opens (``"'Tis``)."""
    while at > 0 and text[at - 1] in "\"'":
        at -= 1
    return at == 0 or text[at - 1] in _OPENS_AFTER


def _replace(mark: str, style: Typography) -> tuple[str, str]:
    """(replacement, change name) for a dash or italics mark; the mark itself when nothing changes."""
    if mark.startswith("--"):
        if style.dashes == "—":
            return "—" * (len(mark) // 2) + "-" * (len(mark) % 2), "dashes --→—"
        return mark, ""
    if mark == "—":
        return ("--", "dashes —→--") if style.dashes == "--" else (mark, "")
    # _
    return ("", "italics _ removed") if not style.italics else (mark, "")


def _plural_possessive(text: str, at: int) -> bool:
    """An apostrophe after a plural's s ("the boys' books"), not a closing quote."""
    return text[at - 1 : at] in ("s", "S") and text[at + 1 : at + 2] == " "


_QUOTE_MARKS = frozenset("\"“”'‘’")


class _Quotes:
    """Quote marks of one text, rewritten left to right (it tracks quotations it swapped open)."""

    def __init__(self, style: Typography, source: Typography | None) -> None:
        self.style = style
        self.swap = (
            source is not None
            and source.dialogue is not None
            and style.dialogue is not None
            and source.dialogue != style.dialogue
        )
        self.open = 0  # single quotations opened and turned into double ones, not yet closed

    def replace(self, text: str, at: int, mark: str) -> tuple[str, str]:
        kind = "double" if mark in '"“”' else "single"
        if mark == '"':
            opening = _opens(text, at)
        elif mark == "'":
            opening = _opens(text, at) and text[at + 1 : at + 2].isalpha() and not _ELISION.match(text, at)
        else:
            opening = mark in "“‘"
        change = ""
        if self.swap:
            following = text[at + 1 : at + 2]
            if kind == "double":
                kind, change = "single", "swap"
            elif opening:
                kind, change = "double", "swap"
                self.open += 1
            elif self.open and not following.isalpha() and not _plural_possessive(text, at):
                kind, change = "double", "swap"
                self.open -= 1
        curly = mark in "“”‘’"
        target = self.style.double_quotes if kind == "double" else self.style.single_quotes
        if target is not None:
            curly = target == "curly"
        if kind == "double":
            replacement = ("“" if opening else "”") if curly else '"'
        else:
            replacement = ("‘" if opening else "’") if curly else "'"
        if change == "swap":
            to = self.style.dialogue
            return replacement, f"dialogue quotes {'single' if to == 'double' else 'double'}→{to}"
        if replacement == mark:
            return mark, ""
        return replacement, f"{kind} quotes {'curly→straight' if not curly else 'straight→curly'}"
