"""One gold boundary of a book → one ChapterBreak instance (or the reason there is none).

Rule: the prefix is cut before the gold's start, the gold is cut at it, and the
negatives (in-book: later starts of the book; out-of-book: the pool) are picked
disjoint from both; an out-of-book negative is rewritten into the gold book's
typography and a heading is conformed to the gold's heading form before it is cut.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable, Sequence

from longread.benchmarks.chapterbreak.build.candidates import Candidate, CandidateStart, InstanceMaker
from longread.benchmarks.chapterbreak.build.negatives import (
    EXHAUSTIVE_BELOW,
    Window,
    later_of_same_kind,
    pick_disjoint,
)
from longread.benchmarks.chapterbreak.build.options import BuildOptions
from longread.benchmarks.chapterbreak.numbering import conform_heading, heading_label
from longread.benchmarks.chapterbreak.schema import CandidateSource, ChapterBreakInstance
from longread.benchmarks.chapterbreak.typography import rewrite

# What an out-of-book negative must share with the gold, by suffix type (for drop reasons).
_OUT_OF_BOOK_FORM = {"chapter": " of the gold's heading form", "dialogue": " opening with the gold's quote"}


def make_instance(
    maker: InstanceMaker,
    starts: list[CandidateStart],
    offsets: list[int],
    gold_index: int,
    options: BuildOptions,
    rng: random.Random,
    pool: Sequence[CandidateStart],
    book_words: int,
) -> tuple[ChapterBreakInstance | None, str]:
    gold_start = starts[gold_index]
    book = maker.rendered.book
    prefix_cut = maker.prefix(gold_start.char_offset)
    _, prefix_start, _, prefix_original = prefix_cut
    if prefix_original < options.min_prefix_tokens:
        return None, f"prefix shorter than --min-prefix-tokens {options.min_prefix_tokens}"
    gold = maker.candidate(gold_start)
    taken: list[Window] = [(book.id, prefix_start, gold_start.char_offset), gold.window]
    make = _negative_maker(maker, gold_start, gold, options)
    if options.negatives_from == "in-book":
        negatives, problem = _in_book_negatives(starts, offsets, gold_index, gold, options, rng, make, taken)
    else:
        negatives, problem = _out_of_book_negatives(pool, book.id, options, rng, make, taken)
    if problem:
        return None, problem
    return _instance(maker, gold_start, gold, negatives, prefix_cut, options, book_words), ""


def _negative_maker(
    maker: InstanceMaker, gold_start: CandidateStart, gold: Candidate, options: BuildOptions
) -> Callable[[CandidateStart], Candidate | None]:
    """How a start becomes a negative beside this gold, or None where it cannot be one (its heading
    cannot take the gold's form, a dialogue negative would not open with the gold's quote)."""
    # Out-of-book negatives take the gold book's typography; in-book ones have it already.
    style = (
        maker.typography if options.negatives_from == "out-of-book" and options.conform_typography else None
    )

    def make(start: CandidateStart) -> Candidate | None:
        if not start.heading:
            candidate = maker.candidate(start, style=style)
            # A dialogue negative opens with the gold's quotation mark (a nested quote from a book
            # that opens dialogue the other way becomes the other mark when rewritten).
            same_opening = (
                style is None or options.suffix_type != "dialogue" or candidate.text[:1] == gold.text[:1]
            )
            return candidate if same_opening else None
        heading = conform_heading(start.heading, gold_start.heading)
        if style is None:
            return None if heading is None else maker.candidate(start, heading)
        # The heading is rewritten before it is conformed, so the gold's heading form is checked
        # on what is shown; its changes count only if they survive conforming.
        own = rewrite(start.heading, style, start.typography)
        shown = conform_heading(own.text, gold_start.heading)
        if shown is None:
            return None
        changes = frozenset(own.changes()) if shown != heading else frozenset()
        return maker.candidate(start, shown, style, changes)

    return make


def _in_book_negatives(
    starts: list[CandidateStart],
    offsets: list[int],
    gold_index: int,
    gold: Candidate,
    options: BuildOptions,
    rng: random.Random,
    make: Callable[[CandidateStart], Candidate | None],
    taken: list[Window],
) -> tuple[list[Candidate], str]:
    """``options.negatives`` later starts of the book, in book order; or why there are not enough."""
    k = options.negatives
    later = later_of_same_kind(starts, gold_index, 0)
    if len(later) < k:
        return [], f"fewer than {k} later candidates in the book"
    # Only starts past the gold's window can be disjoint from it.
    first = max(gold_index + 1, bisect.bisect_left(offsets, gold.window_end))
    eligible = later_of_same_kind(starts, gold_index, first)
    negatives = sorted(pick_disjoint(eligible, k, rng, make, taken), key=lambda c: c.start.char_offset)
    if len(negatives) < k:
        form = " and of the gold's heading form" if starts[gold_index].heading else ""
        return [], f"fewer than {k} later candidates disjoint from the gold and each other{form}"
    return negatives, ""


def _out_of_book_negatives(
    pool: Sequence[CandidateStart],
    book_id: str,
    options: BuildOptions,
    rng: random.Random,
    make: Callable[[CandidateStart], Candidate | None],
    taken: list[Window],
) -> tuple[list[Candidate], str]:
    """``options.negatives`` starts of other books from the pool; or why there are not enough."""
    k = options.negatives
    others = [s for s in pool if s.book_id != book_id] if len(pool) < EXHAUSTIVE_BELOW else pool
    negatives = pick_disjoint(others, k, rng, lambda s: None if s.book_id == book_id else make(s), taken)
    if len(negatives) < k:
        kind = _OUT_OF_BOOK_FORM.get(options.suffix_type, "")
        return [], f"fewer than {k} disjoint candidates{kind} from other books"
    return negatives, ""


def _instance(
    maker: InstanceMaker,
    gold_start: CandidateStart,
    gold: Candidate,
    negatives: list[Candidate],
    prefix_cut: tuple[str, int, int, int],
    options: BuildOptions,
    book_words: int,
) -> ChapterBreakInstance:
    book = maker.rendered.book
    prefix, prefix_start, prefix_tokens, prefix_original = prefix_cut
    collection = book.metadata.get("collection", "pg19")
    tag = gold_start.chapter_index if options.suffix_type == "chapter" else gold_start.char_offset
    suffix_tag = "" if options.negatives_from == "in-book" else "-oob"
    return ChapterBreakInstance(
        id=f"{collection}/{book.id}/{options.suffix_type}{suffix_tag}/{tag}",
        split=collection,
        book_id=book.id,
        book_title=book.title,
        suffix_type=options.suffix_type,
        negatives_from=options.negatives_from,
        boundary_rule=gold_start.rule,
        chapter_index=gold_start.chapter_index,
        boundary_char=gold_start.char_offset,
        prefix=prefix,
        prefix_start_char=prefix_start,
        prefix_truncated=prefix_start > 0,
        prefix_tokens=prefix_tokens,
        prefix_tokens_original=prefix_original,
        prefix_budget=options.prefix_tokens,
        gold=gold.text,
        negatives=[n.text for n in negatives],
        gold_tokens=gold.tokens,
        negative_tokens=[n.tokens for n in negatives],
        candidate_chars_original=[gold.chars_original, *(n.chars_original for n in negatives)],
        suffix_budget=options.suffix_tokens,
        gold_source=_source(gold),
        negative_sources=[_source(n) for n in negatives],
        chapter_number=heading_label(gold_start.heading) if gold_start.heading else None,
        tokenizer=maker.tokenizer.name,
        seed=options.seed,
        book_chapters=len(book.chapters),
        book_words=book_words,
    )


def _source(candidate: Candidate) -> CandidateSource:
    start = candidate.start
    return CandidateSource(
        book_id=start.book_id,
        chapter_index=start.chapter_index,
        char_offset=start.char_offset,
        char_length=candidate.window_end - start.char_offset,
        heading_original=start.heading or None,
        typography=candidate.typography,
    )
