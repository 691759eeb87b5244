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
"""

from __future__ import annotations

import bisect
import functools
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from longread.benchmarks.chapterbreak.boundaries import CHAPTER_RULE, RenderedBook, sentence_positions
from longread.benchmarks.chapterbreak.numbering import conform_heading, heading_label, is_numbered
from longread.benchmarks.chapterbreak.schema import (
    CandidateSource,
    ChapterBreakInstance,
    NegativesFrom,
    SuffixType,
)
from longread.benchmarks.chapterbreak.typography import Typography, describe, rewrite
from longread.documents.book import HEADING_BODY_SEPARATOR, Book
from longread.text.tokenizers import DEFAULT_TOKENIZER, NamedTokenizer, load_tokenizer

# Characters of a candidate kept before token cutting: far more than any suffix budget needs.
_CANDIDATE_WINDOW_CHARS = 64 * 1024

# cause/dialogue boundaries per book when ``max_per_book`` is not given (chapter is never capped).
DEFAULT_MAX_PER_BOOK = 50


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
    # cause/dialogue: how many boundaries per book at most (sampled with the seed);
    # None = DEFAULT_MAX_PER_BOOK, 0 = all. chapter boundaries are never capped.
    max_per_book: int | None = None
    # out-of-book: rewrite each negative into the gold book's typography (off only to measure the leak).
    conform_typography: bool = True

    @property
    def stored_prefix_tokens(self) -> int:
        return math.ceil(self.prefix_tokens * (1.0 + self.prefix_margin))

    @property
    def per_book_cap(self) -> int | None:
        """The cap on boundaries per book this build uses (None: no cap)."""
        if self.suffix_type == "chapter":
            return None
        cap = DEFAULT_MAX_PER_BOOK if self.max_per_book is None else self.max_per_book
        return cap if cap > 0 else None


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
    pool = _pool_for(maker, options, out_of_book_pool)
    for gold_index in golds:
        instance, reason = _make_instance(maker, starts, offsets, gold_index, options, rng, pool, words)
        if instance is None:
            result.dropped[reason] += 1
        else:
            result.instances.append(instance)
    return result


# What an out-of-book negative must share with the gold, by suffix type (for drop reasons).
_OUT_OF_BOOK_FORM = {"chapter": " of the gold's heading form", "dialogue": " opening with the gold's quote"}


# The italics-matched pool is used only when this many other books feed it, so negatives still
# come from many books (a few books' own lengths and words would leak otherwise).
_MIN_MATCHED_POOL_BOOKS = 20


def _pool_for(
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


def _later_of_same_kind(starts: list[CandidateStart], gold_index: int, first: int) -> list[CandidateStart]:
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
_EXHAUSTIVE_BELOW = 256


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

    if len(eligible) < _EXHAUSTIVE_BELOW:
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


def _make_instance(
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
    prefix, prefix_start, prefix_tokens, prefix_original = maker.prefix(gold_start.char_offset)
    if prefix_original < options.min_prefix_tokens:
        return None, f"prefix shorter than --min-prefix-tokens {options.min_prefix_tokens}"
    gold = maker.candidate(gold_start)
    taken: list[Window] = [(book.id, prefix_start, gold_start.char_offset), gold.window]
    k = options.negatives

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

    if options.negatives_from == "in-book":
        later = _later_of_same_kind(starts, gold_index, 0)
        if len(later) < k:
            return None, f"fewer than {k} later candidates in the book"
        # Only starts past the gold's window can be disjoint from it.
        first = max(gold_index + 1, bisect.bisect_left(offsets, gold.window_end))
        eligible = _later_of_same_kind(starts, gold_index, first)
        negatives = sorted(pick_disjoint(eligible, k, rng, make, taken), key=lambda c: c.start.char_offset)
        if len(negatives) < k:
            form = " and of the gold's heading form" if gold_start.heading else ""
            return None, f"fewer than {k} later candidates disjoint from the gold and each other{form}"
    else:
        others = [s for s in pool if s.book_id != book.id] if len(pool) < _EXHAUSTIVE_BELOW else pool
        negatives = pick_disjoint(others, k, rng, lambda s: None if s.book_id == book.id else make(s), taken)
        if len(negatives) < k:
            kind = _OUT_OF_BOOK_FORM.get(options.suffix_type, "")
            return None, f"fewer than {k} disjoint candidates{kind} from other books"
    collection = book.metadata.get("collection", "pg19")
    tag = gold_start.chapter_index if options.suffix_type == "chapter" else gold_start.char_offset
    suffix_tag = "" if options.negatives_from == "in-book" else "-oob"
    instance = ChapterBreakInstance(
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
    return instance, ""


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
