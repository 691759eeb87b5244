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

from longread.benchmarks.chapterbreak.build.book import BookInstances, build_book, pool_entries
from longread.benchmarks.chapterbreak.build.candidates import (
    Candidate,
    CandidateStart,
    InstanceMaker,
    chapter_starts,
    sentence_starts,
)
from longread.benchmarks.chapterbreak.build.negatives import Window, overlaps, pick_disjoint
from longread.benchmarks.chapterbreak.build.options import DEFAULT_MAX_PER_BOOK, BuildOptions, book_rng

__all__ = [
    "DEFAULT_MAX_PER_BOOK",
    "BookInstances",
    "BuildOptions",
    "Candidate",
    "CandidateStart",
    "InstanceMaker",
    "Window",
    "book_rng",
    "build_book",
    "chapter_starts",
    "overlaps",
    "pick_disjoint",
    "pool_entries",
    "sentence_starts",
]
