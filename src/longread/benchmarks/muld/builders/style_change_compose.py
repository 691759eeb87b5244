"""Compose one style-change document: 1–N authors of one pool, their share of the length, paragraphs shuffled.

The rule for each document (all draws from the one seeded ``random.Random``,
over sorted lists, so the same supply and seed give the same documents):

1. the number of authors ``n`` is uniform in 1…``max_authors`` (so about one
   document in ``max_authors`` has a single author); if no pool has ``n``
   authors with text left, ``n`` becomes the most any pool has;
2. a pool (relationship, fandom, or the whole corpus) is drawn among those with
   ``n`` such authors, and ``n`` of its authors are drawn;
3. the minimum length (tokens) is partitioned among them: author ``i`` gets
   ``ceil(min_tokens · w_i / Σw)`` with ``w_i`` uniform in [1, 3], so no author's
   share is under a third of another's;
4. for each author, paragraphs are drawn one at a time, uniformly among that
   author's unused paragraphs of the pool (from any of their works — not
   contiguous runs, as in the PAN corpora, so the order of the story gives no
   clue), until the share is filled; a drawn paragraph is never drawn again;
5. all drawn paragraphs are shuffled and joined with ``"\\n"``; if the result is
   still under ``min_tokens`` (as counted by the length filter), one more
   paragraph of a drawn author goes at a random place, until it is not.

An author takes part only while at least ``min_tokens`` of their paragraphs are
unused (then any share can be filled); what is left below that is reported.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from longread.benchmarks.muld.builders.report import LengthFilter
from longread.benchmarks.muld.builders.style_change_works import Paragraph, Work
from longread.benchmarks.muld.pan import PanTruth

SHARE_WEIGHTS = (1.0, 3.0)


@dataclass
class Supply:
    """The unused paragraphs of each author in each pool, and how many tokens they hold."""

    paragraphs: dict[str, dict[str, list[Paragraph]]] = field(default_factory=dict)
    tokens: dict[tuple[str, str], int] = field(default_factory=dict)

    @classmethod
    def of(cls, works: Iterable[tuple[str, Work]]) -> Supply:
        """``(pool, work)`` pairs → the supply (paragraphs in work order, then text order)."""
        supply = cls()
        for pool, work in works:
            by_author = supply.paragraphs.setdefault(pool, {})
            by_author.setdefault(work.author, []).extend(work.paragraphs)
            key = (pool, work.author)
            supply.tokens[key] = supply.tokens.get(key, 0) + work.tokens
        return supply

    def eligible(self, pool: str, min_tokens: int) -> list[str]:
        return sorted(a for a in self.paragraphs[pool] if self.tokens[(pool, a)] >= min_tokens)

    def draw(self, pool: str, author: str, rng: random.Random) -> Paragraph | None:
        """A uniformly drawn unused paragraph of ``author`` (taken out of the supply); None if none left."""
        left = self.paragraphs[pool][author]
        if not left:
            return None
        index = rng.randrange(len(left))
        left[index], left[-1] = left[-1], left[index]
        paragraph = left.pop()
        self.tokens[(pool, author)] -= paragraph.tokens
        return paragraph

    def leftover(self) -> dict[str, int]:
        """Unused tokens per pool."""
        out: dict[str, int] = {}
        for (pool, _), tokens in sorted(self.tokens.items()):
            out[pool] = out.get(pool, 0) + tokens
        return out


@dataclass(frozen=True)
class Document:
    pool: str
    paragraphs: tuple[Paragraph, ...]
    text: str
    tokens: int
    shares: dict[str, int]
    """Each author's share of the minimum length (tokens), as drawn."""

    def truth(self) -> PanTruth:
        return PanTruth.of_labels([p.author for p in self.paragraphs])

    def authors(self) -> list[str]:
        """Authors in PAN numbering order (first appearance)."""
        return list(dict.fromkeys(p.author for p in self.paragraphs))


def partition(min_tokens: int, authors: int, rng: random.Random) -> list[int]:
    """Each author's share of ``min_tokens`` (rule 3)."""
    weights = [rng.uniform(*SHARE_WEIGHTS) for _ in range(authors)]
    total = sum(weights)
    return [math.ceil(min_tokens * w / total) for w in weights]


def compose(supply: Supply, rng: random.Random, length: LengthFilter, max_authors: int) -> Document | None:
    """One document (rules 1–5), or ``None`` when no author has ``min_tokens`` of text left."""
    min_tokens = length.min_tokens
    pools = {pool: supply.eligible(pool, min_tokens) for pool in sorted(supply.paragraphs)}
    pools = {pool: authors for pool, authors in pools.items() if authors}
    if not pools:
        return None
    wanted = rng.randint(1, max_authors)
    most = max(len(authors) for authors in pools.values())
    wanted = min(wanted, most)
    pool = rng.choice([pool for pool, authors in pools.items() if len(authors) >= wanted])
    authors = rng.sample(pools[pool], wanted)
    shares = partition(min_tokens, wanted, rng)
    chosen: list[Paragraph] = []
    for author, share in zip(authors, shares, strict=True):
        drawn = 0
        while drawn < share:
            paragraph = supply.draw(pool, author, rng)
            assert paragraph is not None  # an eligible author holds at least min_tokens ≥ share
            chosen.append(paragraph)
            drawn += paragraph.tokens
    rng.shuffle(chosen)
    text = "\n".join(p.text for p in chosen)
    long_enough, tokens = length.check(text)
    while not long_enough:
        extra = None
        for author in rng.sample(authors, len(authors)):
            extra = supply.draw(pool, author, rng)
            if extra is not None:
                break
        if extra is None:
            return None
        chosen.insert(rng.randrange(len(chosen) + 1), extra)
        text = "\n".join(p.text for p in chosen)
        long_enough, tokens = length.check(text)
    return Document(pool, tuple(chosen), text, tokens, dict(zip(authors, shares, strict=True)))


def compose_many(
    supply: Supply, rng: random.Random, length: LengthFilter, max_authors: int, count: int | None
) -> tuple[list[Document], str | None]:
    """Up to ``count`` documents (``None``: as many as the supply allows) and why it stopped early."""
    documents: list[Document] = []
    while count is None or len(documents) < count:
        document = compose(supply, rng, length, max_authors)
        if document is None:
            if count is None:
                return documents, None
            return documents, (
                f"made {len(documents)} of {count}: no author has {length.min_tokens} "
                f"{length.tokenizer} tokens of unused paragraphs left"
            )
        documents.append(document)
    return documents, None
