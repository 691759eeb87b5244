"""Books → ChapterBreak instances (one book at a time; see ``pipeline`` for whole corpora).

For a ``chapter`` instance the prefix is the book text before chapter i's heading
(left-truncated to the token budget), the gold is chapter i's start (heading +
body, right-truncated to the suffix budget) and the negatives are starts of
*later* chapters of the same book, sampled with a per-book seeded RNG, their
headings rewritten to carry the gold's chapter number.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from longread.benchmarks.chapterbreak.boundaries import RenderedBook, sentence_positions
from longread.benchmarks.chapterbreak.numbering import heading_label, is_numbered, rewrite_heading_numbers
from longread.benchmarks.chapterbreak.schema import (
    CandidateSource,
    ChapterBreakInstance,
    NegativesFrom,
    SuffixType,
)
from longread.documents.book import HEADING_BODY_SEPARATOR, Book
from longread.text.tokenizers import DEFAULT_TOKENIZER, NamedTokenizer, load_tokenizer

# Characters of a candidate kept before token cutting: far more than any suffix budget needs.
_CANDIDATE_WINDOW_CHARS = 64 * 1024


@dataclass(frozen=True)
class BuildOptions:
    seed: int = 0
    prefix_tokens: int = 8192
    # The stored prefix keeps this much more than the budget, so a model whose tokenizer
    # packs text less densely still finds ``prefix_tokens`` of its own tokens in it.
    prefix_margin: float = 0.25
    suffix_tokens: int = 128
    negatives: int = 5
    tokenizer: str = DEFAULT_TOKENIZER
    suffix_type: SuffixType = "chapter"
    negatives_from: NegativesFrom = "in-book"
    min_prefix_tokens: int = 1
    # cause/dialogue: how many boundaries per book at most (sampled with the seed); None = all.
    max_per_book: int | None = None

    @property
    def stored_prefix_tokens(self) -> int:
        return math.ceil(self.prefix_tokens * (1.0 + self.prefix_margin))


@dataclass(frozen=True)
class CandidateStart:
    """A place a suffix can start: a chapter start or a sentence start."""

    book_id: str
    chapter_index: int
    char_offset: int
    heading: str  # "" for sentence starts
    body: str  # the text from the start on (after the heading), possibly cut to a window


@dataclass
class BookInstances:
    book_id: str
    title: str
    chapters: int
    words: int
    instances: list[ChapterBreakInstance] = field(default_factory=list)
    # boundaries that gave no instance, by reason (reported at the end of a build)
    dropped: Counter[str] = field(default_factory=Counter)


def book_rng(options: BuildOptions, book_id: str) -> random.Random:
    # A string seed is hashed with SHA-512 by ``random``: stable across runs and processes.
    return random.Random(f"longread/chapterbreak/{options.seed}/{book_id}/{options.suffix_type}")


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
    for offset in sentence_positions(rendered, suffix_type):
        chapter = rendered.chapter_at(offset)
        assert chapter is not None
        starts.append(
            CandidateStart(
                book_id=rendered.book.id,
                chapter_index=chapter,
                char_offset=offset,
                heading="",
                body=rendered.text[offset : offset + _CANDIDATE_WINDOW_CHARS],
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
        if options.max_per_book is not None and len(golds) > options.max_per_book:
            # Only boundaries that can have enough negatives are worth drawing.
            eligible = [g for g in golds if len(starts) - g - 1 >= options.negatives]
            golds = sorted(rng.sample(eligible, min(options.max_per_book, len(eligible))))
    for gold_index in golds:
        instance, reason = _make_instance(maker, starts, gold_index, options, rng, out_of_book_pool, words)
        if instance is None:
            result.dropped[reason] += 1
        else:
            result.instances.append(instance)
    return result


def _same_kind(heading: str, gold_heading: str) -> bool:
    # A numbered gold may only meet numbered negatives (their numbers get rewritten);
    # an unnumbered one (PROLOGUE, a bare title) only unnumbered ones, else position leaks.
    return is_numbered(heading) == is_numbered(gold_heading)


def _make_instance(
    maker: InstanceMaker,
    starts: list[CandidateStart],
    gold_index: int,
    options: BuildOptions,
    rng: random.Random,
    pool: Sequence[CandidateStart],
    book_words: int,
) -> tuple[ChapterBreakInstance | None, str]:
    gold = starts[gold_index]
    book = maker.rendered.book
    prefix, prefix_start, prefix_tokens, prefix_original = maker.prefix(gold.char_offset)
    if prefix_original < options.min_prefix_tokens:
        return None, f"prefix shorter than --min-prefix-tokens {options.min_prefix_tokens}"
    if options.negatives_from == "in-book":
        later = [s for s in starts[gold_index + 1 :] if _same_kind(s.heading, gold.heading)]
        if len(later) < options.negatives:
            return None, f"fewer than {options.negatives} later candidates in the book"
        negatives = sorted(rng.sample(later, options.negatives), key=lambda s: s.char_offset)
    else:
        negatives = _sample_other_books(pool, book.id, gold.heading, options.negatives, rng)
        if len(negatives) < options.negatives:
            return None, f"fewer than {options.negatives} candidates from other books"
    gold_text, gold_tokens, gold_chars = maker.suffix(gold.heading, gold.body)
    negative_texts: list[str] = []
    negative_tokens: list[int] = []
    negative_chars: list[int] = []
    for negative in negatives:
        heading = rewrite_heading_numbers(negative.heading, gold.heading) if negative.heading else ""
        text, tokens, chars = maker.suffix(heading, negative.body)
        negative_texts.append(text)
        negative_tokens.append(tokens)
        negative_chars.append(chars)
    collection = book.metadata.get("collection", "pg19")
    tag = gold.chapter_index if options.suffix_type == "chapter" else gold.char_offset
    suffix_tag = "" if options.negatives_from == "in-book" else "-oob"
    instance = ChapterBreakInstance(
        id=f"{collection}/{book.id}/{options.suffix_type}{suffix_tag}/{tag}",
        split=collection,
        book_id=book.id,
        book_title=book.title,
        suffix_type=options.suffix_type,
        negatives_from=options.negatives_from,
        chapter_index=gold.chapter_index,
        boundary_char=gold.char_offset,
        prefix=prefix,
        prefix_start_char=prefix_start,
        prefix_truncated=prefix_start > 0,
        prefix_tokens=prefix_tokens,
        prefix_tokens_original=prefix_original,
        prefix_budget=options.prefix_tokens,
        gold=gold_text,
        negatives=negative_texts,
        gold_tokens=gold_tokens,
        negative_tokens=negative_tokens,
        candidate_chars_original=[gold_chars, *negative_chars],
        suffix_budget=options.suffix_tokens,
        gold_source=_source(gold),
        negative_sources=[_source(n) for n in negatives],
        chapter_number=heading_label(gold.heading) if gold.heading else None,
        tokenizer=maker.tokenizer.name,
        seed=options.seed,
        book_chapters=len(book.chapters),
        book_words=book_words,
    )
    return instance, ""


def _source(start: CandidateStart) -> CandidateSource:
    return CandidateSource(
        book_id=start.book_id,
        chapter_index=start.chapter_index,
        char_offset=start.char_offset,
        heading_original=start.heading or None,
    )


def _sample_other_books(
    pool: Sequence[CandidateStart], book_id: str, gold_heading: str, k: int, rng: random.Random
) -> list[CandidateStart]:
    """k distinct pool entries from other books whose heading kind matches the gold's."""
    chosen: dict[int, CandidateStart] = {}
    attempts = 0
    while len(chosen) < k and attempts < 50 * k and pool:
        attempts += 1
        index = rng.randrange(len(pool))
        entry = pool[index]
        if entry.book_id != book_id and index not in chosen and _same_kind(entry.heading, gold_heading):
            chosen[index] = entry
    return list(chosen.values())


def pool_entries(book: Book, options: BuildOptions) -> list[CandidateStart]:
    """What a book offers to other books' out-of-book negatives (short windows only)."""
    rendered = RenderedBook.of(book)
    if options.suffix_type == "chapter":
        starts = chapter_starts(rendered)[1:]
    else:
        starts = sentence_starts(rendered, options.suffix_type)
    window = options.suffix_tokens * 16
    return [
        CandidateStart(s.book_id, s.chapter_index, s.char_offset, s.heading, s.body[:window]) for s in starts
    ]
