"""Scores split by memory: ``longread report RUN… --memory PROBE_DIR``.

Every run's primary metric per x value (and pooled over every x), on the books the probed model
*remembers* against those it does not (books the probes cannot tell about in a column of their own), from
the verdicts of ``longread probe memory``
(:mod:`longread.probes.memory.verdicts`). A row's book is its ``book_id``. The unit that is remembered is
the book, and a book's instances are not independent, so every interval is **by book**: a side's mean
takes the CR2 cluster interval with Bell–McCaffrey's degrees of freedom (a corpus metric the
delete-one-book jackknife), and the difference (remembered − not, two independent groups of books) the
sum of the two sides' variances with Welch–Satterthwaite's degrees of freedom — the intervals whose
coverage docs/statistics.md measures. A side with fewer than :data:`~longread.metrics.paired.MIN_BOOKS`
books gets no interval (too few books to speak for books) — the counts of books and instances say so.

The probes must be of the run's model: probes of another model are refused, naming both.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from longread.errors import LongreadError
from longread.evaluation.registry import make_task
from longread.evaluation.results import x_value
from longread.evaluation.rows import read_typed_rows
from longread.metrics import group_sort_key
from longread.metrics.cluster_t import TInterval, cluster_mean_interval, jackknife_interval, t_interval
from longread.metrics.paired import MIN_BOOKS
from longread.models.identity import model_name, same_model
from longread.probes.memory.rule import CANNOT_TELL
from longread.probes.memory.verdicts import MemoryVerdicts
from longread.report.grouped import selected_keys
from longread.report.load import RunReport
from longread.report.table import format_x

GROUPS = ("remembered", "not remembered", "cannot tell", "not probed")
ALL_X = "all"


class MemorySplitError(LongreadError):
    """The runs cannot be split by these probes (another model, rows without books)."""


@dataclass(frozen=True)
class SideScore:
    group: str
    books: int
    instances: int
    value: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True)
class MemorySplit:
    """One run at one x value: the metric on each group of books, and remembered − not remembered."""

    run: str
    x: Any
    metric: str
    sides: tuple[SideScore, ...]
    difference: float | None
    ci_low: float | None
    ci_high: float | None

    def side(self, group: str) -> SideScore:
        return next(side for side in self.sides if side.group == group)

    def as_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["sides"] = [asdict(side) for side in self.sides]
        return values


def check_models(runs: Sequence[RunReport], verdicts: MemoryVerdicts) -> None:
    """Refuse probes of another model than a run's, naming both."""
    for run in runs:
        model = run.model
        if not same_model(model, verdicts.model):
            raise MemorySplitError(
                f"--memory {verdicts.path.parent}: the probes are of {verdicts.model_name}, but run "
                f"{run.path} is of {model_name(model)}; probe the run's model with `longread probe memory "
                f"BOOK… --model {model.get('spec') or model_name(model)} --out DIR` and give that folder"
            )


def memory_splits(runs: Sequence[RunReport], verdicts: MemoryVerdicts) -> list[MemorySplit]:
    """Per run, per x value and pooled: the primary metric on remembered / not remembered / not probed
    books (see the module docstring)."""
    check_models(runs, verdicts)
    out: list[MemorySplit] = []
    for run in runs:
        task = make_task(run.task)
        metric = next((m for m in task.metrics() if m.name == run.primary_metric), None)
        if metric is None:
            raise MemorySplitError(f"{run.path}: {run.primary_metric!r} is not a metric of {run.task}")
        statistic = _statistic(metric)
        by_x: dict[Any, dict[str, dict[str, list[Any]]]] = {}
        for row in _rows(run, task.row_model):
            value = row if metric.sample_value is None else metric.sample_value(row)
            if value is None:
                continue
            book = _book_id(run, row)
            group = _group(verdicts.verdict(book))
            for x in (x_value(row, task.x_axis.field), ALL_X):
                by_x.setdefault(x, {}).setdefault(group, {}).setdefault(book, []).append(value)
        for x in sorted(by_x, key=lambda x: (x == ALL_X, group_sort_key(x))):
            if x == ALL_X and len(by_x) == 2:
                continue  # one x value: the pooled row would repeat it
            out.append(_split(run.label, x, metric.name, by_x[x], statistic, metric.level == "corpus"))
    return out


def split_table(splits: Sequence[MemorySplit], verdicts: MemoryVerdicts, scale: str = "linear") -> str:
    """A markdown table of the splits (values in the metric's own unit) and a note on how it was made."""
    if not splits:
        return ""
    lines = [
        "| run | x | remembered | not remembered | cannot tell | not probed | remembered − not [95% CI] |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for split in splits:
        lines.append(f"| {split.run} | {format_x(split.x, scale)} | " + " | ".join(split_cells(split)) + " |")
    return "\n".join(lines) + "\n\n" + split_note(splits, verdicts)


def split_cells(split: MemorySplit) -> list[str]:
    """The cells of one row after run and x: each group's score, then the difference."""
    cells = [_side_cell(split.side(group)) for group in GROUPS]
    if split.difference is None:
        cells.append("— (a side has no book)")
    elif split.ci_low is None or split.ci_high is None:
        cells.append(f"{split.difference:+.3f} (fewer than 2 books a side: no interval)")
    else:
        cells.append(f"{split.difference:+.3f} [{split.ci_low:+.3f}, {split.ci_high:+.3f}]")
    return cells


def split_note(splits: Sequence[MemorySplit], verdicts: MemoryVerdicts) -> str:
    """How the split was made: the metric, the probes, the rule, the books remembered, the bootstrap."""
    remembered = verdicts.remembered()
    named = "; ".join(f"{book}: {verdicts.why(book)}" for book in remembered) or "none"
    unsure = sorted(verdicts.cannot_tell())
    return (
        f"{splits[0].metric} by the memory of {verdicts.model_name} (probes: {verdicts.path.parent}; rule "
        f"{verdicts.rule}; remembered: {named}; cannot tell: {', '.join(unsure) or 'none'} — the probes "
        "neither reach the rule nor rule it out for these, so they are neither side of the difference). "
        "Cells: value [95% CI] (books, instances); intervals by book (CR2 cluster t, a corpus metric the "
        f"delete-one-book jackknife; the difference Welch–Satterthwaite), none below {MIN_BOOKS} books."
    )


def _side_cell(side: SideScore) -> str:
    if side.value is None:
        return "—"
    interval = "" if side.ci_low is None else f" [{side.ci_low:.3f}, {side.ci_high:.3f}]"
    return f"{side.value:.3f}{interval} ({side.books}, {side.instances})"


def _split(
    run: str,
    x: Any,
    metric: str,
    groups: dict[str, dict[str, list[Any]]],
    statistic: Callable[[list[Any]], float | None],
    corpus: bool = False,
) -> MemorySplit:
    sides = []
    intervals: dict[str, TInterval | None] = {}
    for group in GROUPS:
        books = groups.get(group, {})
        values = _flat(books)
        interval = side_interval(books, statistic, corpus)
        intervals[group] = interval
        low, high = (None, None) if interval is None else (interval.low, interval.high)
        sides.append(
            SideScore(group, len(books), len(values), statistic(values) if values else None, low, high)
        )
    remembered, forgotten = groups.get("remembered", {}), groups.get("not remembered", {})
    difference = low = high = None
    if remembered and forgotten:
        difference = _difference([_flat(remembered), _flat(forgotten)], statistic)
        both = intervals["remembered"], intervals["not remembered"]
        if difference is not None and both[0] is not None and both[1] is not None:
            low, high = welch_interval(difference, both[0], both[1])
    return MemorySplit(run, x, metric, tuple(sides), difference, low, high)


def side_interval(
    books: dict[str, list[Any]], statistic: Callable[[list[Any]], float | None], corpus: bool
) -> TInterval | None:
    """A side's interval by book (None below :data:`MIN_BOOKS` books, or where it is not finite)."""
    if len(books) < MIN_BOOKS:
        return None
    items = _flat(books)
    clusters = [book for book, values in books.items() for _ in values]
    if corpus:

        def on(indices: Any) -> float:
            value = statistic([items[i] for i in indices])
            return math.nan if value is None else float(value)

        interval = jackknife_interval(on, len(items), clusters)
    else:
        interval = cluster_mean_interval([float(v) for v in items], clusters)
    return interval if math.isfinite(interval.low) and math.isfinite(interval.high) else None


def welch_interval(difference: float, a: TInterval, b: TInterval) -> tuple[float, float]:
    """The difference of two independent groups' estimates: their variances summed, Welch–Satterthwaite's
    degrees of freedom from each side's own."""
    va, vb = a.se**2, b.se**2
    if va + vb == 0:
        return difference, difference
    df = (va + vb) ** 2 / ((va**2 / a.df if va else 0.0) + (vb**2 / b.df if vb else 0.0))
    interval = t_interval(difference, va + vb, df)
    return interval.low, interval.high


def _flat(books: dict[str, list[Any]]) -> list[Any]:
    return [value for values in books.values() for value in values]


def _difference(parts: list[list[Any]], statistic: Callable[[list[Any]], float | None]) -> float | None:
    a, b = statistic(parts[0]), statistic(parts[1])
    return None if a is None or b is None else a - b


def _statistic(metric: Any) -> Callable[[list[Any]], float | None]:
    if metric.level == "corpus":
        corpus: Callable[[list[Any]], float | None] = metric.corpus_value
        return lambda rows: corpus(rows) if rows else None
    return lambda values: float(np.mean([float(v) for v in values])) if values else None


def _group(verdict: bool | str | None) -> str:
    if verdict is None:
        return "not probed"
    if verdict == CANNOT_TELL:
        return "cannot tell"
    return "remembered" if verdict else "not remembered"


def _rows(run: RunReport, row_model: Any) -> list[Any]:
    rows = read_typed_rows(Path(run.path), row_model)
    selected = selected_keys(Path(run.path))
    return [row for row in rows if selected is None or row.key in selected]


def _book_id(run: RunReport, row: Any) -> str:
    value = getattr(row, "book_id", None)
    if value is None and row.model_extra:
        value = row.model_extra.get("book_id")
    if value is None:
        raise MemorySplitError(
            f"{run.path}: row {row.key!r} names no book (book_id): {run.task} cannot be split by the "
            "memory of books; --memory takes runs of ChapterBreak and NarrativeXL"
        )
    return str(value)
