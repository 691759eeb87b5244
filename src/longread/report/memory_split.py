"""Scores split by memory: ``longread report RUN… --memory PROBE_DIR``.

Every run's primary metric per x value (and pooled over every x), on the books the probed model
*remembers* against those it does not (books the probes cannot tell about in a column of their own), from
the verdicts of ``longread probe memory``
(:mod:`longread.probes.memory.verdicts`). A row's book is its ``book_id``. The unit that is remembered is
the book, and a book's instances are not independent, so every interval is a **book-level** (cluster)
bootstrap: books are resampled with replacement, each with all its instances; the difference
(remembered − not) resamples each side's books on its own. A side with fewer than two books gets no
interval (one book cannot show how books vary) — the counts of books and instances say so.

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
from longread.models.identity import model_name, same_model
from longread.probes.memory.rule import CANNOT_TELL
from longread.probes.memory.verdicts import MemoryVerdicts
from longread.report.grouped import selected_keys
from longread.report.load import RunReport
from longread.report.table import format_x

SPLIT_RESAMPLES = 2000
SPLIT_SEED = 0
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
            out.append(_split(run.label, x, metric.name, by_x[x], statistic))
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
        "Cells: value [95% CI] (books, instances); intervals "
        f"resample books ({SPLIT_RESAMPLES} resamples, seed {SPLIT_SEED}), each with all its instances."
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
) -> MemorySplit:
    sides = []
    for group in GROUPS:
        books = groups.get(group, {})
        values = [value for book in books.values() for value in book]
        low = high = None
        if len(books) >= 2:
            estimates = _cluster_estimates([books], lambda parts: statistic(parts[0]), SPLIT_SEED)
            low, high = _percentiles(estimates)
        sides.append(
            SideScore(group, len(books), len(values), statistic(values) if values else None, low, high)
        )
    remembered, forgotten = groups.get("remembered", {}), groups.get("not remembered", {})
    difference = low = high = None
    if remembered and forgotten:
        difference = _difference([_flat(remembered), _flat(forgotten)], statistic)
        if len(remembered) >= 2 and len(forgotten) >= 2:
            estimates = _cluster_estimates(
                [remembered, forgotten], lambda parts: _difference(parts, statistic), SPLIT_SEED
            )
            low, high = _percentiles(estimates)
    return MemorySplit(run, x, metric, tuple(sides), difference, low, high)


def _flat(books: dict[str, list[Any]]) -> list[Any]:
    return [value for values in books.values() for value in values]


def _difference(parts: list[list[Any]], statistic: Callable[[list[Any]], float | None]) -> float | None:
    a, b = statistic(parts[0]), statistic(parts[1])
    return None if a is None or b is None else a - b


def _cluster_estimates(
    sides: list[dict[str, list[Any]]], estimate: Callable[[list[list[Any]]], float | None], seed: int
) -> list[float]:
    """``estimate`` on each resample: every side's books drawn with replacement, all their instances."""
    rng = np.random.default_rng(seed)
    clusters = [list(side.values()) for side in sides]
    out = []
    for _ in range(SPLIT_RESAMPLES):
        parts = []
        for books in clusters:
            picks = rng.integers(0, len(books), size=len(books))
            parts.append([value for pick in picks for value in books[pick]])
        value = estimate(parts)
        if value is not None and math.isfinite(value):
            out.append(value)
    return out


def _percentiles(estimates: list[float]) -> tuple[float | None, float | None]:
    if not estimates:
        return None, None
    low, high = np.percentile(estimates, [2.5, 97.5])
    return float(low), float(high)


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
