"""Candidate starts of one book and their cutting to the token budgets.

Rule: a ``CandidateStart`` is a place a suffix can start (a chapter heading or a
sentence start); ``InstanceMaker`` turns it into a ``Candidate`` (its kept text cut
to the suffix budget, optionally rewritten into the gold book's typography) and
cuts prefixes. Every window is measured in the candidate's own book's rendered text.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from longread.benchmarks.chapterbreak.boundaries import CHAPTER_RULE, RenderedBook, sentence_positions
from longread.benchmarks.chapterbreak.build.options import BuildOptions
from longread.benchmarks.chapterbreak.typography import Typography, describe, rewrite
from longread.documents.book import HEADING_BODY_SEPARATOR
from longread.text.tokenizers import NamedTokenizer

# Characters of a candidate kept before token cutting: far more than any suffix budget needs.
_CANDIDATE_WINDOW_CHARS = 64 * 1024


@dataclass(frozen=True)
class CandidateStart:
    """A place a suffix can start: a chapter start or a sentence start."""

    book_id: str
    chapter_index: int
    char_offset: int
    heading: str  # "" for sentence starts
    body: str  # the text from the start on (after the heading), possibly cut to a window
    rule: str = CHAPTER_RULE  # the boundary rule that found this start (boundaries.BOUNDARY_RULES)
    typography: Typography | None = None  # its book's style (set on out-of-book pool entries)


@dataclass(frozen=True)
class Candidate:
    """A start made into a candidate: its kept text and the window of its book it covers."""

    start: CandidateStart
    text: str
    tokens: int
    chars_original: int
    window_end: int  # char_offset + characters of the book the kept text covers
    typography: str | None = None  # what rewriting into the gold book's style changed in the kept text

    @property
    def window(self) -> tuple[str, int, int]:
        return self.start.book_id, self.start.char_offset, self.window_end


def chapter_starts(rendered: RenderedBook) -> list[CandidateStart]:
    book = rendered.book
    return [
        CandidateStart(
            book_id=book.id,
            chapter_index=index,
            char_offset=rendered.heading_starts[index],
            heading=chapter.heading,
            body=chapter.text[:_CANDIDATE_WINDOW_CHARS],
        )
        for index, chapter in enumerate(book.chapters)
    ]


def sentence_starts(rendered: RenderedBook, suffix_type: str) -> list[CandidateStart]:
    starts = []
    for offset, rule in sentence_positions(rendered, suffix_type):
        chapter = rendered.chapter_at(offset)
        assert chapter is not None
        starts.append(
            CandidateStart(
                book_id=rendered.book.id,
                chapter_index=chapter,
                char_offset=offset,
                heading="",
                body=rendered.text[offset : offset + _CANDIDATE_WINDOW_CHARS],
                rule=rule,
            )
        )
    return starts


class InstanceMaker:
    """Cuts prefixes and suffixes to their token budgets for one book."""

    def __init__(self, rendered: RenderedBook, options: BuildOptions, tokenizer: NamedTokenizer) -> None:
        self.rendered = rendered
        self.options = options
        self.tokenizer = tokenizer
        encoding = tokenizer.encode(rendered.text)
        self._token_starts = encoding.starts
        self._token_ends = encoding.ends
        # A start is cut again for every gold it may be a negative of, mostly with the same heading:
        # each cut is made once (same arguments, same candidate).
        self._candidates: dict[tuple[object, ...], Candidate] = {}

    def prefix(self, boundary: int) -> tuple[str, int, int, int]:
        """(kept prefix, its start offset, kept tokens, original tokens) for a boundary offset."""
        original = int(np.searchsorted(self._token_ends, boundary, side="right"))
        first = max(0, original - self.options.stored_prefix_tokens)
        start = 0 if first == 0 else int(self._token_starts[first])
        return self.rendered.text[start:boundary], start, original - first, original

    def suffix(self, heading: str, body: str) -> tuple[str, int, int]:
        """A candidate cut to the suffix budget: (text, kept tokens, original characters)."""
        full = heading + HEADING_BODY_SEPARATOR + body if heading else body
        kept, count, _ = self.tokenizer.head(full, self.options.suffix_tokens)
        return kept, count, len(full)

    @functools.cached_property
    def typography(self) -> Typography:
        """This book's typographic style (learnt once, from its whole text)."""
        return Typography.of(self.rendered.text)

    def candidate(
        self,
        start: CandidateStart,
        heading: str | None = None,
        style: Typography | None = None,
        heading_changes: frozenset[str] = frozenset(),
    ) -> Candidate:
        """``start`` cut to the suffix budget, its heading replaced by ``heading`` when given,
        its body rewritten into ``style`` first when given (a replacing heading is taken as
        written; ``heading_changes``: what rewriting it into ``style`` changed).

        The window is measured in the book's own text: a replaced heading counts
        with its original length, the body with the characters of the original kept.
        """
        key = (start, heading, style, heading_changes)
        made = self._candidates.get(key)
        if made is None:
            made = self._candidates[key] = self._make_candidate(start, heading, style, heading_changes)
        return made

    def _make_candidate(
        self,
        start: CandidateStart,
        heading: str | None,
        style: Typography | None,
        heading_changes: frozenset[str],
    ) -> Candidate:
        shown = start.heading if heading is None else heading
        if style is None:
            text, tokens, chars = self.suffix(shown, start.body)
            body_kept = len(text) - (len(shown) + len(HEADING_BODY_SEPARATOR) if shown else 0)
            return self._candidate(start, text, tokens, chars, max(0, body_kept), None)
        if heading is None and shown:
            shown_new = rewrite(shown, style, start.typography)
            shown, heading_changes = shown_new.text, frozenset(shown_new.changes())
        body_new = rewrite(start.body, style, start.typography)
        text, tokens, chars = self.suffix(shown, body_new.text)
        lead = len(shown) + len(HEADING_BODY_SEPARATOR) if shown else 0
        body_kept = max(0, len(text) - lead)
        changes = heading_changes | body_new.changes(body_kept)
        return self._candidate(
            start, text, tokens, chars, body_new.original_length(body_kept), describe(changes)
        )

    @staticmethod
    def _candidate(
        start: CandidateStart, text: str, tokens: int, chars: int, body_covered: int, typography: str | None
    ) -> Candidate:
        covered = (
            len(start.heading) + len(HEADING_BODY_SEPARATOR) + body_covered if start.heading else body_covered
        )
        return Candidate(start, text, tokens, chars, start.char_offset + covered, typography)
