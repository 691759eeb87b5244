"""Sentence-aligned segments of at most ``size`` encoder tokens (SuffixLM's unit of text).

Sentences come from ``syntok`` (pure Python, nothing to download, handles "Mr."
and quotations; measured 4/5 on tricky novel passages at ~0.7M chars/s, see
OFFLINE.md), split paragraph by paragraph. A segment is a run of whole
sentences whose tokens fit into ``size``; a sentence that does not fit into the
current segment starts the next one, and a sentence longer than ``size`` alone
overflows: it fills segments of ``size`` tokens and its tail starts the next
segment, which following sentences may join. Shorter segments are padded by the
encoder (the pad is not part of the segment).

Packing runs forward (from the text's start: a candidate's first segment starts
where the candidate starts) or backward (from the text's end: a context's last
segment ends exactly at the break, and a shorter cut of the same context yields
the same trailing segments, so their encodings are shared in the cache).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Sequence

from syntok import segmenter

SEGMENT_TOKENS = 128

Segment = tuple[int, ...]
"""Encoder token ids of one segment, without special tokens."""

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def split_sentences(text: str) -> list[str]:
    """``text`` cut at sentence starts; the pieces join back to ``text`` exactly."""
    return list(_split_sentences(text))


@functools.lru_cache(maxsize=16)
def _split_sentences(text: str) -> tuple[str, ...]:
    """Remembered: a whole novel takes syntok ~1.4 s, and a build cuts the same books again (a rebuild, a
    decoy book read for several questions' books)."""
    starts: list[int] = []
    for match_start, paragraph in _paragraphs(text):
        for para in segmenter.analyze(paragraph):
            for sentence in para:
                if sentence:
                    starts.append(match_start + sentence[0].offset)
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    bounds = [*sorted(set(starts)), len(text)]
    return tuple(text[a:b] for a, b in itertools.pairwise(bounds) if b > a)


def _paragraphs(text: str) -> list[tuple[int, str]]:
    pieces: list[tuple[int, str]] = []
    position = 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        pieces.append((position, text[position : match.start()]))
        position = match.start()
    pieces.append((position, text[position:]))
    return [(start, piece) for start, piece in pieces if piece.strip()]


def pack(
    sentences: Sequence[Sequence[int]], size: int = SEGMENT_TOKENS, *, from_end: bool = False
) -> list[Segment]:
    """Pack tokenised sentences into segments of at most ``size`` tokens (see the module doc)."""
    if size < 1:
        raise ValueError(f"segment size must be at least 1, got {size}")
    ordered = [list(s)[::-1] for s in reversed(sentences)] if from_end else [list(s) for s in sentences]
    segments: list[list[int]] = []
    current: list[int] = []
    for tokens in ordered:
        if not tokens:
            continue
        if current and len(current) + len(tokens) > size:
            segments.append(current)
            current = []
        while len(current) + len(tokens) > size:
            room = size - len(current)
            segments.append(current + tokens[:room])
            current, tokens = [], tokens[room:]
        current.extend(tokens)
    if current:
        segments.append(current)
    if from_end:
        return [tuple(seg[::-1]) for seg in reversed(segments)]
    return [tuple(seg) for seg in segments]


Tokenize = Callable[[list[str]], list[list[int]]]
"""Texts → token ids without special tokens."""


class Segmenter:
    """Text → sentence-aligned segments of one tokenizer's tokens."""

    def __init__(self, tokenize: Tokenize, size: int = SEGMENT_TOKENS) -> None:
        self.tokenize = tokenize
        self.size = size

    def sentence_tokens(self, text: str) -> list[list[int]]:
        sentences = split_sentences(text)
        return self.tokenize(sentences) if sentences else []

    def segments(self, text: str, *, from_end: bool = False) -> list[Segment]:
        return pack(self.sentence_tokens(text), self.size, from_end=from_end)

    def context_segments(self, text: str, max_tokens: int | None) -> tuple[list[Segment], int, int]:
        """The context's last ``max_tokens`` tokens packed from the end; (segments, original, kept)."""
        sentences = self.sentence_tokens(text)
        original = sum(len(s) for s in sentences)
        if max_tokens is not None and original > max_tokens:
            sentences = _keep_last(sentences, max_tokens)
        kept = sum(len(s) for s in sentences)
        return pack(sentences, self.size, from_end=True), original, kept

    def first_segment(self, text: str, max_tokens: int | None) -> tuple[Segment, int, int]:
        """A candidate cut to its first ``max_tokens`` tokens → (its first segment, read, original)."""
        sentences = self.sentence_tokens(text)
        original = sum(len(s) for s in sentences)
        if max_tokens is not None and original > max_tokens:
            sentences = _keep_first(sentences, max_tokens)
        segments = pack(sentences, self.size)
        first = segments[0] if segments else ()
        return first, len(first), original


def _keep_last(sentences: list[list[int]], budget: int) -> list[list[int]]:
    kept: list[list[int]] = []
    for tokens in reversed(sentences):
        if budget <= 0:
            break
        kept.append(tokens[-budget:])
        budget -= len(kept[-1])
    return kept[::-1]


def _keep_first(sentences: list[list[int]], budget: int) -> list[list[int]]:
    kept: list[list[int]] = []
    for tokens in sentences:
        if budget <= 0:
            break
        kept.append(tokens[:budget])
        budget -= len(kept[-1])
    return kept
