"""Style-change documents made here from real Gutenberg novels of different authors (a test fixture).

Not the project's builder (``build_style_change``): a small, seeded stand-in so the
style-pair tests do not depend on it. Per document: 1–4 authors drawn from the
given pool, one novel each; ``paragraphs`` paragraphs in runs of 1–4, each run's
author drawn at random, every author's paragraphs taken in book order from a
random start. Only paragraphs of at least ``min_words`` words are used (short
dialogue lines carry almost no style); whitespace inside a paragraph is collapsed
to single spaces, so one paragraph is one line. The PAN truth is computed from
the authors.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from functools import cache
from pathlib import Path

from longread.benchmarks.muld.records import MuldRecord
from longread.documents.gutenberg import read_gutenberg
from tests.helpers import GUTENBERG

# Manifest spellings of one person.
_ALIASES = {"A. Conan Doyle": "Arthur Conan Doyle", "Fyodor Dostoyevsky": "Fyodor Dostoevsky"}
_SPACES = re.compile(r"\s+")
# Books longread's Gutenberg reader refuses (left out of the pool, so no author depends on them).
_UNREADABLE = {"pg157.txt.gz": "Daddy-Long-Legs: letters whose headings are not a chapter sequence"}


@cache
def author_books() -> dict[str, tuple[Path, ...]]:
    """Author → their novels in the shared corpus (manifest order)."""
    books: dict[str, list[Path]] = {}
    for line in (GUTENBERG / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["file"] in _UNREADABLE:
            continue
        author = _ALIASES.get(row["author"], row["author"])
        books.setdefault(author, []).append(GUTENBERG / row["file"])
    return {author: tuple(paths) for author, paths in sorted(books.items())}


def split_authors(seed: int = 0, held_out: float = 0.4) -> tuple[list[str], list[str]]:
    """(training authors, held-out authors), disjoint, seeded."""
    authors = sorted(author_books())
    random.Random(seed).shuffle(authors)
    cut = round(len(authors) * (1 - held_out))
    return sorted(authors[:cut]), sorted(authors[cut:])


@cache
def book_paragraphs(path: Path, min_words: int = 30) -> tuple[str, ...]:
    book = read_gutenberg(path)
    found: list[str] = []
    for chapter in book.chapters:
        for block in chapter.text.split("\n\n"):
            text = _SPACES.sub(" ", block).strip()
            if len(text.split()) >= min_words and not text.startswith("["):
                found.append(text)
    return tuple(found)


def style_document(
    authors: list[str], rng: random.Random, paragraphs: int, min_words: int = 30
) -> tuple[list[str], list[int]]:
    """(paragraphs, author number per paragraph from 1 in order of first appearance)."""
    k = rng.randint(1, min(4, len(authors)))
    chosen = rng.sample(authors, k)
    pools = [book_paragraphs(rng.choice(author_books()[a]), min_words) for a in chosen]
    cursors = [rng.randrange(0, len(pool) - paragraphs) for pool in pools]
    texts: list[str] = []
    who: list[int] = []
    while len(texts) < paragraphs:
        author = rng.randrange(k)
        for _ in range(min(rng.randint(1, 4), paragraphs - len(texts))):
            texts.append(pools[author][cursors[author]])
            cursors[author] += 1
            who.append(author)
    order: dict[int, int] = {}
    numbers = [order.setdefault(a, len(order) + 1) for a in who]
    return texts, numbers


def style_records(
    authors: list[str], documents: int, seed: int, paragraphs: int = 20, min_words: int = 30
) -> list[MuldRecord]:
    """MuLD style-change records: input = paragraphs one per line, output[0] = PAN truth JSON."""
    rng = random.Random(seed)
    records = []
    for index in range(documents):
        texts, numbers = style_document(authors, rng, paragraphs, min_words)
        truth = {
            "authors": len(set(numbers)),
            "changes": [int(a != b) for a, b in itertools.pairwise(numbers)],
            "paragraph-authors": numbers,
        }
        records.append(
            MuldRecord(
                input="\n".join(texts),
                output=(json.dumps(truth),),
                metadata=json.dumps({"id": f"doc-{seed}-{index}"}, sort_keys=True),
            )
        )
    return records
