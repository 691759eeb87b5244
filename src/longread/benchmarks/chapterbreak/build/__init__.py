"""Books → ChapterBreak instances, one book at a time (``pipeline`` builds whole corpora).

:func:`build_book` gives a book's instances: a prefix ending at a chapter break, the true next chapter
start and negatives from later chapters (or other books), never overlapping; the rules are in
:mod:`.book`, the candidates, negatives and options in their own modules.
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
