"""Statistics of a ChapterBreak set, laid out like the paper's Tables 3–4."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance


@dataclass(frozen=True)
class Spread:
    mean: float
    min: int
    max: int

    @classmethod
    def of(cls, values: list[int]) -> Spread | None:
        if not values:
            return None
        return cls(sum(values) / len(values), min(values), max(values))

    def __str__(self) -> str:
        return f"{self.mean:,.0f} ({self.min:,}–{self.max:,})"


@dataclass
class SplitStats:
    split: str
    works: int = 0
    examples_by_type: Counter[str] = field(default_factory=Counter)
    # which rule found each boundary (files built before rules were recorded count as "unrecorded")
    examples_by_rule: Counter[str] = field(default_factory=Counter)
    chapters_per_work: Spread | None = None
    words_per_work: Spread | None = None
    prefix_tokens: Spread | None = None
    gold_tokens: Spread | None = None
    truncated_prefixes: int = 0
    tokenizers: tuple[str, ...] = ()


def compute_stats(instances: Iterable[ChapterBreakInstance]) -> list[SplitStats]:
    by_split: dict[str, list[ChapterBreakInstance]] = defaultdict(list)
    for instance in instances:
        by_split[instance.split].append(instance)
    result = []
    for split in sorted(by_split):
        rows = by_split[split]
        works: dict[str, ChapterBreakInstance] = {}
        for row in rows:
            works.setdefault(row.book_id, row)
        stats = SplitStats(split=split, works=len(works))
        stats.examples_by_type = Counter(
            f"{r.suffix_type}{'' if r.negatives_from == 'in-book' else ' (out-of-book)'}" for r in rows
        )
        stats.examples_by_rule = Counter(r.boundary_rule or "unrecorded" for r in rows)
        stats.chapters_per_work = Spread.of(
            [w.book_chapters for w in works.values() if w.book_chapters is not None]
        )
        stats.words_per_work = Spread.of([w.book_words for w in works.values() if w.book_words is not None])
        stats.prefix_tokens = Spread.of([r.prefix_tokens for r in rows])
        stats.gold_tokens = Spread.of([r.gold_tokens for r in rows])
        stats.truncated_prefixes = sum(1 for r in rows if r.prefix_truncated)
        stats.tokenizers = tuple(sorted({r.tokenizer for r in rows}))
        result.append(stats)
    return result


def format_stats(stats: list[SplitStats]) -> str:
    """A markdown table: one column per split."""
    if not stats:
        return "no instances"
    types = sorted({t for s in stats for t in s.examples_by_type})
    header = "| | " + " | ".join(s.split for s in stats) + " |"
    lines = [header, "|---" * (len(stats) + 1) + "|"]

    def row(name: str, values: list[str]) -> None:
        lines.append(f"| {name} | " + " | ".join(values) + " |")

    row("works", [f"{s.works:,}" for s in stats])
    for suffix_type in types:
        row(f"examples: {suffix_type}", [f"{s.examples_by_type.get(suffix_type, 0):,}" for s in stats])
    rules = sorted({rule for s in stats for rule in s.examples_by_rule})
    if len(rules) > 1:
        for rule in rules:
            row(f"boundaries: {rule}", [f"{s.examples_by_rule.get(rule, 0):,}" for s in stats])
    row("chapters per work, mean (min–max)", [str(s.chapters_per_work or "n/a") for s in stats])
    row("words per work, mean (min–max)", [str(s.words_per_work or "n/a") for s in stats])
    row("prefix tokens, mean (min–max)", [str(s.prefix_tokens or "n/a") for s in stats])
    row("gold suffix tokens, mean (min–max)", [str(s.gold_tokens or "n/a") for s in stats])
    row("prefixes cut to the budget", [f"{s.truncated_prefixes:,}" for s in stats])
    row("tokenizer", [", ".join(s.tokenizers) for s in stats])
    return "\n".join(lines)
