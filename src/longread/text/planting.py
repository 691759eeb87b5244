"""A verbatim copy planted in a text a given number of tokens before its end: the known positive a
calibration needs (ChapterBreak's gold opening in its prefix, NarrativeXL's true summary in the book read
so far).

The copy starts ``distance`` tokens before the text's end, at a sentence boundary (seeded among the
boundaries from ``distance`` to ``distance + SLACK`` tokens; where none lies there, between two words at
the distance, recorded as not at a sentence), so every copy starts between ``distance`` and ``distance +
SLACK`` tokens before the end. It is followed by the whitespace that followed the sentence it comes after,
so it reads as a sentence or paragraph of its own. The text then loses as many tokens at its start as the
copy added, so its token length stays.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from longread.errors import LongreadError

SLACK = 64
"""A boundary up to this many tokens farther than the distance asked for may take the copy."""
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*(\s+)")
_WORD_GAP = re.compile(r"\s+")

Count = Callable[[str], int]
"""Tokens of a text in the model's tokenizer (no start token)."""


class PlantError(LongreadError):
    """A copy that cannot be planted: names the instance and what to change."""


@dataclass(frozen=True)
class PlantedText:
    text: str
    """The text with the copy in it, cut at its start to its former token length."""
    at_char: int
    """Where the copy starts in ``text``."""
    cut_chars: int
    """Characters cut from the text's start."""
    distance_tokens: int
    """Tokens from the copy's start to the text's end, as planted."""
    copy_tokens: int
    copy_chars: int
    at_sentence: bool


def copy_opening(text: str, count: Count, tokens: int) -> str:
    """The longest opening of ``text`` (whole characters, verbatim) of at most ``tokens`` tokens."""
    low, high = 1, len(text)
    while low < high:  # the largest c with count(text[:c]) <= tokens
        middle = (low + high + 1) // 2
        if count(text[:middle]) <= tokens:
            low = middle
        else:
            high = middle - 1
    return text[:low].rstrip()


def plant_in_text(text: str, copy: str, distance: int, count: Count, rng: random.Random) -> PlantedText:
    """``copy`` planted to start ``distance`` tokens before ``text``'s end (see the module docstring)."""
    before = count(text)
    # the copy's own tokens lie between its start and the text that followed the boundary
    at, gap, at_sentence = _place(text, distance - count(copy), count, rng)
    planted = text[:at] + copy + gap + text[at:]
    cut = _cut_to(planted, before, count, limit=at)
    final = planted[cut:]
    return PlantedText(
        text=final,
        at_char=at - cut,
        cut_chars=cut,
        distance_tokens=count(final[at - cut :]),
        copy_tokens=count(copy),
        copy_chars=len(copy),
        at_sentence=at_sentence,
    )


def _tail_tokens(text: str, count: Count) -> Callable[[int], int]:
    cache: dict[int, int] = {}

    def tail(at: int) -> int:
        if at not in cache:
            cache[at] = count(text[at:])
        return cache[at]

    return tail


def _place(text: str, distance: int, count: Count, rng: random.Random) -> tuple[int, str, bool]:
    """(offset, the whitespace to put after the copy, at a sentence boundary?): a place with at least
    ``distance`` tokens of the text after it."""
    tail = _tail_tokens(text, count)
    ends = [(m.end(), m.group(1)) for m in _SENTENCE_END.finditer(text)]
    # tail(offset) falls as the offset grows: the first boundary whose tail is below the distance
    first_short = _first(len(ends), lambda k: tail(ends[k][0]) < distance)
    near = []
    for k in range(first_short - 1, -1, -1):
        if tail(ends[k][0]) > distance + SLACK:
            break
        near.append(ends[k])
    if near:
        offset, gap = rng.choice(sorted(near))
        return offset, gap, True
    gaps = [(m.end(), m.group(0)) for m in _WORD_GAP.finditer(text)]
    k = _first(len(gaps), lambda j: tail(gaps[j][0]) < distance)
    if k == 0:
        raise PlantError(f"no place {distance} tokens before the end of a text of {tail(0)} tokens")
    return gaps[k - 1][0], " ", False


def _first(n: int, short: Callable[[int], bool]) -> int:
    """The smallest k in [0, n] with short(k) (short is False then True as k grows); n if none."""
    low, high = 0, n
    while low < high:
        middle = (low + high) // 2
        if short(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _cut_to(text: str, tokens: int, count: Count, *, limit: int) -> int:
    """The fewest characters to cut from ``text``'s start so that it has at most ``tokens`` tokens,
    never past ``limit`` (the copy)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high) // 2
        if count(text[middle:]) <= tokens:
            high = middle
        else:
            low = middle + 1
    return low
