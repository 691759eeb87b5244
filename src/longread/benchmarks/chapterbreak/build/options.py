"""Build options for ChapterBreak, and the per-book RNG they seed.

Rule: everything a build's output depends on besides the books themselves is a
``BuildOptions`` field; every random choice about a book is drawn from ``book_rng``.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from longread.benchmarks.chapterbreak.schema import NegativesFrom, SuffixType
from longread.text.tokenizers import DEFAULT_TOKENIZER

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


def book_rng(options: BuildOptions, book_id: str) -> random.Random:
    # A string seed is hashed with SHA-512 by ``random``: stable across runs and processes.
    return random.Random(f"longread/chapterbreak/{options.seed}/{book_id}/{options.suffix_type}")
