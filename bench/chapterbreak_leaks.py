"""ChapterBreak variants on the whole shared corpus: yield, overlaps and shortcut rules.

    .venv/bin/python bench/chapterbreak_leaks.py [--corpus ../shared/corpus/gutenberg] [--workers 2]
        [--prefix-tokens 8192] [--types chapter,cause,dialogue] [--max-per-book N]

For each suffix type × negatives source it builds every instance (in the worker
processes; only tallies come back) and prints: instances per book, boundaries
dropped and why, candidates whose windows overlap (must be 0), and the accuracy
of four surface rules that must stay near chance (1/6): the heading-form rule
(the candidate whose first line has the form of the prefix's last chapter
heading), the longest / shortest candidate rules and the typography rule (the
candidate whose quote, italics and dash marks are those of the prefix; out-of-book
negatives are rewritten into the gold book's typography). Ties count as 1/k of a hit.
cause and dialogue use the build's default cap on boundaries per book
(``build.DEFAULT_MAX_PER_BOOK``) unless ``--max-per-book`` says otherwise (0: no cap).
"""

from __future__ import annotations

import argparse
import functools
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from longread.benchmarks.chapterbreak.build import BuildOptions, CandidateStart, build_book
from longread.benchmarks.chapterbreak.leaks import RULES, LeakTally, binomial_margin, tally
from longread.benchmarks.chapterbreak.pipeline import collect_pool
from longread.documents.book import Book
from longread.documents.corpus import LocalProcesses, map_books
from longread.documents.reader import ReadOptions

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "gutenberg"
CHANCE = 1 / 6


@dataclass
class BookTally:
    instances: int
    rules: Counter[str]
    leaks: LeakTally


@dataclass
class VariantTally:
    books_read: int = 0
    per_book: list[int] = field(default_factory=list)
    rules: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    leaks: LeakTally = field(default_factory=LeakTally)
    seconds: float = 0.0


def tally_book(
    book: Book, options: BuildOptions, pool: Sequence[CandidateStart]
) -> tuple[BookTally, Counter[str]]:
    built = build_book(book, options, out_of_book_pool=pool)
    rules = Counter(instance.boundary_rule or "?" for instance in built.instances)
    return BookTally(len(built.instances), rules, tally(built.instances)), built.dropped


def run_variant(books: list[Path], options: BuildOptions, workers: int) -> VariantTally:
    started = time.perf_counter()
    result = VariantTally()
    pool: tuple[CandidateStart, ...] = ()
    if options.negatives_from == "out-of-book":
        pool = collect_pool(list(books), options, ReadOptions(), LocalProcesses(workers))
    per_book = functools.partial(tally_book, options=options, pool=pool)
    for outcome in map_books(list(books), per_book, mapper=LocalProcesses(workers)):
        result.books_read += 1
        if outcome.result is None:
            result.per_book.append(0)
            continue
        book_tally, dropped = outcome.result
        result.per_book.append(book_tally.instances)
        result.rules.update(book_tally.rules)
        result.dropped.update(dropped)
        result.leaks.merge(book_tally.leaks)
    result.seconds = time.perf_counter() - started
    return result


def report(name: str, options: BuildOptions, variant: VariantTally) -> None:
    counts = variant.per_book
    n = variant.leaks.instances
    yielding = sum(1 for c in counts if c)
    mean = n / max(len(counts), 1)
    print(f"\n## {name}  ({variant.seconds:.0f} s)")
    print(
        f"instances {n} from {yielding}/{variant.books_read} books: {mean:.1f} per book read, "
        f"{n / max(yielding, 1):.1f} per yielding book (max per book: {options.per_book_cap})"
    )
    if len(variant.rules) > 1:
        print(
            "boundary rules: " + ", ".join(f"{rule} {count}" for rule, count in sorted(variant.rules.items()))
        )
    for reason, count in sorted(variant.dropped.items()):
        print(f"  dropped {count:6d}  {reason}")
    print(f"overlapping candidates: {variant.leaks.overlapping}")
    margin = binomial_margin(n, CHANCE)
    for rule in RULES:
        result = variant.leaks.result(rule)
        flag = "" if abs(result.accuracy - CHANCE) <= margin else "   <-- outside the chance band"
        print(
            f"  rule {rule:<13} accuracy {result.accuracy:.3f} ({result.hits:.1f}/{n}); "
            f"chance {CHANCE:.3f} ± {margin:.3f}{flag}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--prefix-tokens", type=int, default=8192)
    parser.add_argument("--types", default="chapter,cause,dialogue")
    parser.add_argument("--negatives-from", default="in-book,out-of-book")
    parser.add_argument(
        "--max-per-book",
        type=int,
        default=None,
        help="cause/dialogue boundaries per book (default: the build's default; 0 = no cap, "
        "which for dialogue means ~1,600 per novel)",
    )
    parser.add_argument(
        "--no-conform-typography",
        action="store_true",
        help="leave out-of-book negatives in their own book's typography (to measure that leak)",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    books = sorted(args.corpus.glob("*.txt.gz"))
    print(f"{len(books)} books from {args.corpus}; prefix {args.prefix_tokens} tokens, seed {args.seed}")
    for suffix_type in args.types.split(","):
        for negatives_from in args.negatives_from.split(","):
            options = BuildOptions(
                seed=args.seed,
                prefix_tokens=args.prefix_tokens,
                suffix_type=suffix_type,  # type: ignore[arg-type]
                negatives_from=negatives_from,  # type: ignore[arg-type]
                max_per_book=args.max_per_book,
                conform_typography=not args.no_conform_typography,
            )
            report(f"{suffix_type} × {negatives_from}", options, run_variant(books, options, args.workers))


if __name__ == "__main__":
    main()
