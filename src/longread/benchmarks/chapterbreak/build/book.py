"""Books → ChapterBreak instances (one book at a time; see ``pipeline`` for whole corpora).

For a ``chapter`` instance the prefix is the book text before chapter i's heading
(left-truncated to the token budget), the gold is chapter i's start (heading +
body, right-truncated to the suffix budget) and the negatives are starts of
*later* chapters of the same book, sampled with a per-book seeded RNG, their
headings rewritten to the gold's heading form (``numbering.conform_heading``).

Candidates never overlap: the gold and every negative cover disjoint windows of
their books (the characters their kept, token-cut text spans), and none overlaps
the prefix. A boundary without enough such negatives yields no instance; the
reason is counted in the build report.

Out-of-book negatives are rewritten into the gold book's typography (quotes,
dashes, italics marks; ``typography``) before they are cut, so they differ from
the gold by what they say, not by how their book was typeset. ``cause`` and
``dialogue`` take at most ``DEFAULT_MAX_PER_BOOK`` boundaries per book unless told
otherwise (uncapped, dialogue gives ~1,600 instances per novel).

This module holds the two per-book entry points (``build_book``, ``pool_entries``;
both are sent to worker processes) and re-exports the rest: ``options`` (BuildOptions,
the per-book RNG), ``candidates`` (starts and their cutting to budgets), ``negatives``
(which starts may be negatives, picking disjoint ones) and ``instances`` (one
boundary → one instance).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from longread.benchmarks.chapterbreak.boundaries import RenderedBook
from longread.benchmarks.chapterbreak.build.candidates import (
    CandidateStart,
    InstanceMaker,
    chapter_starts,
    sentence_starts,
)
from longread.benchmarks.chapterbreak.build.instances import make_instance
from longread.benchmarks.chapterbreak.build.negatives import pool_for
from longread.benchmarks.chapterbreak.build.options import BuildOptions, book_rng
from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance
from longread.benchmarks.chapterbreak.typography import Typography
from longread.documents.book import Book
from longread.text.tokenizers import load_tokenizer

__all__ = [
    "BookInstances",
    "build_book",
    "pool_entries",
]


@dataclass
class BookInstances:
    book_id: str
    title: str
    chapters: int
    words: int
    instances: list[ChapterBreakInstance] = field(default_factory=list)
    # boundaries that gave no instance, by reason (reported at the end of a build)
    dropped: Counter[str] = field(default_factory=Counter)


def build_book(
    book: Book,
    options: BuildOptions,
    *,
    out_of_book_pool: Sequence[CandidateStart] = (),
) -> BookInstances:
    """Every instance one book yields, and why the other boundaries yielded none."""
    rendered = RenderedBook.of(book)
    result = BookInstances(book.id, book.title, len(book.chapters), book.word_count)
    words = result.words
    tokenizer = load_tokenizer(options.tokenizer)
    maker = InstanceMaker(rendered, options, tokenizer)
    rng = book_rng(options, book.id)
    if options.suffix_type == "chapter":
        starts = chapter_starts(rendered)
        golds = list(range(1, len(starts)))
        result.dropped["first chapter (nothing before it)"] += 1 if starts else 0
    else:
        starts = sentence_starts(rendered, options.suffix_type)
        golds = list(range(len(starts)))
        cap = options.per_book_cap
        if cap is not None and len(golds) > cap:
            # Only boundaries that can have enough negatives are worth drawing.
            eligible = [g for g in golds if len(starts) - g - 1 >= options.negatives]
            golds = sorted(rng.sample(eligible, min(cap, len(eligible))))
    offsets = [s.char_offset for s in starts]
    pool = pool_for(maker, options, out_of_book_pool)
    for gold_index in golds:
        instance, reason = make_instance(maker, starts, offsets, gold_index, options, rng, pool, words)
        if instance is None:
            result.dropped[reason] += 1
        else:
            result.instances.append(instance)
    return result


def pool_entries(book: Book, options: BuildOptions) -> list[CandidateStart]:
    """What a book offers to other books' out-of-book negatives (short windows only)."""
    rendered = RenderedBook.of(book)
    if options.suffix_type == "chapter":
        starts = chapter_starts(rendered)[1:]
    else:
        starts = sentence_starts(rendered, options.suffix_type)
        cap = options.per_book_cap
        if cap is not None and len(starts) > cap:
            # Golds are capped per book, so the pool is too: otherwise books with many boundaries
            # (dense dialogue, whose 128-token windows are short in characters) fill the pool and
            # the gold stands out by its length.
            pool_rng = random.Random(
                f"longread/chapterbreak/pool/{options.seed}/{book.id}/{options.suffix_type}"
            )
            starts = sorted(pool_rng.sample(starts, cap), key=lambda s: s.char_offset)
    window = options.suffix_tokens * 16
    style = Typography.of(rendered.text)
    return [
        CandidateStart(s.book_id, s.chapter_index, s.char_offset, s.heading, s.body[:window], s.rule, style)
        for s in starts
    ]
