"""Where extraction asks: seeded places (one per stratum, inside one excerpt), every chapter break of a
book as it is printed (the continuation starts where the previous chapter's text ends, so it holds the
next chapter's heading), or exactly the breaks a built benchmark asks about."""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from longread.documents.book import CHAPTER_SEPARATOR, Book
from longread.documents.excerpts import BookExcerpts
from longread.probes.memory.probes import Asked, Place


def piece_ids(encoder: Any, book: Book) -> tuple[list[int], list[int]]:
    """Every piece encoded on its own, joined; and where each piece ends in the joined ids."""
    ids: list[int] = []
    ends = []
    for chapter in book.chapters:
        if chapter.text.strip():
            ids += encoder.encode_plain(chapter.text.strip())
            ends.append(len(ids))
    return ids, ends


def benchmark_breaks(encoder: Any, excerpts: BookExcerpts, before: int, after: int) -> list[Asked]:
    """The extraction at each break a built benchmark asks about: the last N tokens of the text before it,
    the first M of the text after (each encoded on its own, as the benchmark gives them to a model)."""
    out = []
    for index, (prefix, following) in enumerate(excerpts.breaks):
        read, truth = encoder.encode_plain(prefix), encoder.encode_plain(following)
        if len(read) >= before and len(truth) >= after:
            out.append(Asked(read[-before:], truth[:after], Place(index, "benchmark break")))
    return out


def seeded_places(
    n_ids: int, before: int, after: int, count: int, seed: int, book: str, ends: Sequence[int] = ()
) -> list[int]:
    """Up to ``count`` positions with ``before`` tokens before and ``after`` from them, one per stratum of
    the positions that have them. ``ends``: where each piece ends (built data; default one piece), a place
    and its tokens lying in one piece."""
    ranges, start = [], 0
    for end in [*ends] or [n_ids]:  # a place p needs ids[p - before : p + after] inside its piece
        if end - after >= start + before:
            ranges.append((start + before, end - after + 1))
        start = end
    span = sum(high - low for low, high in ranges)
    if span == 0:
        return []
    rng = np.random.default_rng(place_seed(seed, book))
    n = min(count, span)
    edges = [round(i * span / n) for i in range(n + 1)]
    return [_nth_position(ranges, int(rng.integers(edges[i], edges[i + 1]))) for i in range(n)]


def place_seed(seed: int, book: str) -> int:
    """The places' seed: the whole SHA-256 of (seed, book id), so every character of the id counts."""
    return int.from_bytes(hashlib.sha256(f"{seed}\0{book}\0places".encode()).digest(), "little")


def _nth_position(ranges: Sequence[tuple[int, int]], index: int) -> int:
    for low, high in ranges:
        if index < high - low:
            return low + index
        index -= high - low
    raise IndexError(index)


def chapter_places(
    book: Book, encoder: Any, text: str, before: int, after: int, ids: Sequence[int]
) -> tuple[list[Place], int]:
    """Each chapter break of the printed book (``text``: :meth:`Book.render`): the first token after the
    previous chapter's last character, so the continuation reads the blank lines and the next chapter's
    heading (and any BOOK/PART heading before it) as printed; (places, breaks too near an end).

    A fast tokenizer's character offsets place every break in one encoding of the book (the first token
    starting at or after the break); otherwise the text before each break is encoded again."""
    _, offsets = book.render()
    n_ids = len(ids)
    starts = _token_starts(encoder, text, ids)
    places, too_near = [], 0
    for chapter, offset in zip(book.chapters[1:], offsets[1:], strict=True):
        lead = len(CHAPTER_SEPARATOR) + sum(len(part) + len(CHAPTER_SEPARATOR) for part in chapter.parts)
        body_end = len(text[: offset - lead].rstrip())
        if starts is not None:
            position = bisect.bisect_left(starts, body_end)
        else:
            position = len(encoder.encode_plain(text[:body_end]))
        if position < before or position + after > n_ids:
            too_near += 1
        else:
            places.append(Place(position, "chapter break"))
    return places, too_near


def _token_starts(encoder: Any, text: str, ids: Sequence[int]) -> list[int] | None:
    """Where each token of the book's encoding starts, from a fast tokenizer whose ids are the encoder's."""
    tokenizer: Any = getattr(encoder, "tokenizer", None)
    if not getattr(tokenizer, "is_fast", False):
        return None
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    if list(encoded["input_ids"]) != list(ids):
        return None
    return [int(start) for start, _ in encoded["offset_mapping"]]
