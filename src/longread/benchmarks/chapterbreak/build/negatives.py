"""Which starts may be a gold's negatives, and how disjoint ones are picked.

Rule: a negative never overlaps the prefix, the gold or another negative (windows in
their own books' text); a chapter negative is numbered exactly when the gold is; an
out-of-book pool keeps to books that use ``_`` italics when the gold's book does.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from longread.benchmarks.chapterbreak.build.candidates import Candidate, CandidateStart, InstanceMaker
from longread.benchmarks.chapterbreak.build.options import BuildOptions
from longread.benchmarks.chapterbreak.numbering import is_numbered

# The italics-matched pool is used only when this many other books feed it, so negatives still
# come from many books (a few books' own lengths and words would leak otherwise).
_MIN_MATCHED_POOL_BOOKS = 20


def pool_for(
    maker: InstanceMaker, options: BuildOptions, pool: Sequence[CandidateStart]
) -> Sequence[CandidateStart]:
    """The out-of-book pool one book draws from: for a book that uses ``_`` italics, entries
    from other books that use them too (italics can be dropped from a negative, never added),
    when at least ``_MIN_MATCHED_POOL_BOOKS`` such books are in the pool."""
    if not pool or not options.conform_typography or not maker.typography.italics:
        return pool
    own = maker.rendered.book.id
    matching = [s for s in pool if s.typography is None or s.typography.italics]
    books = {s.book_id for s in matching} - {own}
    return matching if len(books) >= _MIN_MATCHED_POOL_BOOKS else pool


def _same_kind(heading: str, gold_heading: str) -> bool:
    # A numbered gold may only meet numbered negatives (their numbers get rewritten);
    # an unnumbered one (PROLOGUE, a bare title) only unnumbered ones, else position leaks.
    return is_numbered(heading) == is_numbered(gold_heading)


def later_of_same_kind(starts: list[CandidateStart], gold_index: int, first: int) -> list[CandidateStart]:
    """Starts after the gold (from index ``first`` on) that may be its negatives."""
    later = starts[max(first, gold_index + 1) :]
    gold_heading = starts[gold_index].heading
    if not gold_heading:  # sentence starts: no heading to match
        return later
    return [s for s in later if _same_kind(s.heading, gold_heading)]


Window = tuple[str, int, int]  # (book id, first char, end char) in that book's rendered text


def overlaps(window: Window, others: Sequence[Window]) -> bool:
    book, start, end = window
    return any(book == b and start < e and s < end for b, s, e in others)


# Below this many eligible starts every one is tried (in a seeded random order);
# above it starts are drawn at random until enough disjoint ones are found.
EXHAUSTIVE_BELOW = 256


def pick_disjoint(
    eligible: Sequence[CandidateStart],
    k: int,
    rng: random.Random,
    make: Callable[[CandidateStart], Candidate | None],
    taken: Sequence[Window],
) -> list[Candidate]:
    """Up to k candidates from ``eligible`` whose windows overlap neither ``taken`` nor each other.

    ``make`` returns None for a start that cannot be a candidate (e.g. no heading of
    the gold's form). Returns fewer than k when no more can be found.
    """
    windows = list(taken)
    chosen: list[Candidate] = []

    def consider(start: CandidateStart) -> None:
        candidate = make(start)
        if candidate is not None and not overlaps(candidate.window, windows):
            chosen.append(candidate)
            windows.append(candidate.window)

    if len(eligible) < EXHAUSTIVE_BELOW:
        order = list(range(len(eligible)))
        rng.shuffle(order)
        for index in order:
            if len(chosen) == k:
                break
            consider(eligible[index])
        return chosen
    tried: set[int] = set()
    for _ in range(50 * k):
        if len(chosen) == k:
            break
        index = rng.randrange(len(eligible))
        if index not in tried:
            tried.add(index)
            consider(eligible[index])
    return chosen
