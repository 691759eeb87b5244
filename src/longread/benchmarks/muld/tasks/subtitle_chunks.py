"""The MuLD translation baseline's document side: subtitle chunks that never break a line, and the join.

Cutting (:func:`line_chunks`): a subtitle document is ``"\\n"``-separated lines.
Lines are packed greedily, in order, into chunks of at most ``max_tokens``
tokens; a line never straddles two chunks. A single line longer than
``max_tokens`` becomes a chunk of its own, flagged ``over_long`` and listed in the
selection's notes — it is never cut. Token counts are those of the whole-document
encoding (the tokens starting inside a line or its newline), as in
:func:`~longread.benchmarks.muld.tasks.chunks.token_chunks`. Chunk spans include the
trailing newline, so chunks cover the document with no gap and no overlap; the
text sent for translation is the chunk's lines without that final newline.

Joining (:func:`align_lines`, :func:`join_translations`): blank source lines
are not translated — they come back blank in place. The model's output for a
chunk with ``k`` non-blank lines is stripped of blank lines and fitted to ``k``
lines:

- ``exact``: it has ``k`` lines;
- ``merged``: more than ``k`` — consecutive output lines are grouped into ``k``
  groups (each non-empty, joined by a space) whose cumulative lengths follow the
  source lines' cumulative lengths as closely as possible;
- ``split``: fewer than ``k`` — the output's words are grouped into ``k`` lines
  by the same proportional rule;
- ``padded``: fewer words than ``k`` — one word a line, then empty lines;
- ``empty``: no output at all — ``k`` empty lines.

Every chunk that was not ``exact`` is recorded as a :class:`LineMismatch`, so the
joined translation always has exactly the document's line count.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from longread.benchmarks.muld.tasks.chunks import KeptSpan, Selection
from longread.text.tokenizers import NamedTokenizer

AlignRule = Literal["exact", "merged", "split", "padded", "empty"]


@dataclass(frozen=True)
class LineChunk:
    """Lines ``first_line … first_line + n_lines - 1`` of the document; ``document[start:end]``."""

    index: int
    start: int
    end: int
    first_line: int
    lines: tuple[str, ...]
    n_tokens: int
    over_long: bool

    @property
    def text(self) -> str:
        """What is sent for translation: the chunk's lines joined by newlines."""
        return "\n".join(self.lines)

    @property
    def content_lines(self) -> tuple[str, ...]:
        """The non-blank lines, the ones a translation must give back."""
        return tuple(line for line in self.lines if line.strip())


@dataclass(frozen=True)
class AlignedLines:
    lines: tuple[str, ...]
    expected: int
    model_lines: int
    rule: AlignRule


@dataclass(frozen=True)
class LineMismatch:
    chunk: int
    expected: int
    model_lines: int
    rule: AlignRule


@dataclass(frozen=True)
class JoinedTranslation:
    text: str
    mismatches: tuple[LineMismatch, ...]


def line_chunks(document: str, tokenizer: NamedTokenizer, max_tokens: int) -> list[LineChunk]:
    """Pack the document's lines into chunks of at most ``max_tokens`` tokens (module docstring)."""
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    if not document:
        return []
    lines = document.split("\n")
    line_starts = np.cumsum([0] + [len(line) + 1 for line in lines[:-1]])
    token_starts = tokenizer.encode(document).starts
    # Tokens per line: those starting inside the line or on its newline.
    boundaries = np.searchsorted(token_starts, np.append(line_starts, len(document) + 1), side="left")
    line_tokens = np.diff(boundaries)
    chunks: list[LineChunk] = []

    def close(first: int, stop: int, tokens: int) -> None:
        start = int(line_starts[first])
        end = int(line_starts[stop]) if stop < len(lines) else len(document)
        chunk = LineChunk(
            len(chunks), start, end, first, tuple(lines[first:stop]), tokens, tokens > max_tokens
        )
        chunks.append(chunk)

    first, tokens = 0, 0
    for number, count in enumerate(int(count) for count in line_tokens):
        if count > max_tokens:  # over-long: a chunk of its own, never cut
            if number > first:
                close(first, number, tokens)
            close(number, number + 1, count)
            first, tokens = number + 1, 0
        elif tokens + count > max_tokens:
            close(first, number, tokens)
            first, tokens = number, count
        else:
            tokens += count
    if first < len(lines):
        close(first, len(lines), tokens)
    return chunks


def chunk_selection(
    document: str, tokenizer: NamedTokenizer, max_tokens: int
) -> tuple[list[LineChunk], Selection]:
    """The chunks and their record: every chunk is kept; over-long lines are named in the notes."""
    chunks = line_chunks(document, tokenizer, max_tokens)
    kept = tuple(
        KeptSpan(
            index=chunk.index,
            start=chunk.start,
            end=chunk.end,
            n_tokens=chunk.n_tokens,
            full_tokens=chunk.n_tokens,
            label=f"lines {chunk.first_line + 1}-{chunk.first_line + len(chunk.lines)}"
            + (" over-long" if chunk.over_long else ""),
        )
        for chunk in chunks
    )
    notes = tuple(
        f"line {chunk.first_line + 1} has {chunk.n_tokens} tokens > {max_tokens}: sent alone, not cut"
        for chunk in chunks
        if chunk.over_long
    )
    selection = Selection(
        method="subtitle-lines",
        tokenizer=tokenizer.name,
        document_chars=len(document),
        document_tokens=sum(chunk.n_tokens for chunk in chunks),
        n_units=len(chunks),
        kept=kept,
        settings={"max_tokens": max_tokens},
        notes=notes,
    )
    return chunks, selection


def align_lines(output: str, source_lines: Sequence[str]) -> AlignedLines:
    """Fit a model's translation of ``source_lines`` (all non-blank) to exactly that many lines."""
    expected = len(source_lines)
    got = [line.strip() for line in output.split("\n") if line.strip()]
    weights = [len(line) + 1 for line in source_lines]
    if len(got) == expected:
        return AlignedLines(tuple(got), expected, len(got), "exact")
    if not got:
        return AlignedLines(("",) * expected, expected, 0, "empty")
    if len(got) > expected:
        return AlignedLines(_group(got, weights), expected, len(got), "merged")
    words = " ".join(got).split()
    if len(words) >= expected:
        return AlignedLines(_group(words, weights), expected, len(got), "split")
    return AlignedLines(tuple(words) + ("",) * (expected - len(words)), expected, len(got), "padded")


def _group(units: Sequence[str], weights: Sequence[int]) -> tuple[str, ...]:
    """``units`` (at least ``len(weights)``) in ``len(weights)`` non-empty runs following the weights."""
    k, m = len(weights), len(units)
    if k == 0:
        return ()
    target = np.cumsum(weights)[:-1] / sum(weights)
    lengths = np.cumsum([len(unit) + 1 for unit in units])
    share = lengths[:-1] / lengths[-1]
    cuts: list[int] = []
    previous = 0
    for group, fraction in enumerate(target, start=1):
        lowest, highest = previous + 1, m - (k - group)  # leave one unit for every later group
        window = share[lowest - 1 : highest]  # share[c - 1] is the output's share before cut c
        previous = lowest + int(np.argmin(np.abs(window - fraction)))  # ties: the earlier cut
        cuts.append(previous)
    bounds = [0, *cuts, m]
    return tuple(" ".join(units[a:b]) for a, b in itertools.pairwise(bounds))


def join_translations(chunks: Sequence[LineChunk], outputs: Sequence[str]) -> JoinedTranslation:
    """One translated document with the source's line structure (blank lines in place)."""
    if len(chunks) != len(outputs):
        raise ValueError(f"{len(chunks)} chunks but {len(outputs)} translations")
    lines: list[str] = []
    mismatches: list[LineMismatch] = []
    for chunk, output in zip(chunks, outputs, strict=True):
        aligned = align_lines(output, chunk.content_lines)
        if aligned.rule != "exact":
            mismatches.append(LineMismatch(chunk.index, aligned.expected, aligned.model_lines, aligned.rule))
        translated = iter(aligned.lines)
        lines.extend(next(translated) if line.strip() else line for line in chunk.lines)
    return JoinedTranslation("\n".join(lines), tuple(mismatches))
