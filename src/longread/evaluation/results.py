"""The one shape of ``results.json`` for every task: metrics with 95% intervals per x-axis value.

    {"task", "model", "chance", "primary_metric",
     "x_axis": {"field", "label", "scale"},
     "metrics": {name: {"level", "higher_is_better", "interval", "description"}},
     "by_x": {x: {"n", "metrics": {name: {"value", "ci_low", "ci_high", "n"}}, "extras": {...}}},
     "overall": {"n", "metrics": {...}},
     "counts": {"instances", "samples"}, "notes": {...}}

``longread report`` reads only this, so a new task gets its table and memory
curve without report code. Computed from rows sorted by key with closed-form
intervals (docs/statistics.md), so the file is byte-identical after a kill and resume.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from longread.evaluation.task import Metric, SampleRow, Task, XValue
from longread.metrics import group_sort_key, wilson_interval
from longread.metrics.cluster_t import cluster_mean_interval, cluster_share_interval, jackknife_interval
from longread.metrics.paired import MIN_BOOKS, book_level

RESULTS_LAYOUT_VERSION = 2


def x_value(row: SampleRow, field: str) -> XValue:
    value = getattr(row, field, None)
    if value is None and row.model_extra:
        value = row.model_extra.get(field)
    if not isinstance(value, int | float | str) or isinstance(value, bool):
        raise ValueError(f"row {row.key!r}: x-axis field {field!r} is {value!r}, not a number or a label")
    return value


def metric_value(metric: Metric, rows: Sequence[SampleRow]) -> dict[str, float | int | str | None]:
    """The metric over ``rows`` with its 95% interval: where the rows name five or more books, one that
    speaks for books (a share: the hull of the exact binomial and the logit-scale CR2 interval; a mean: CR2; a
    corpus metric: the delete-one-book jackknife), else for the instances (Wilson; the t interval; the
    jackknife by instance groups). Measured: docs/statistics.md."""
    books = _books(rows)
    by_book = book_level(len(set(books)) if books is not None else None)
    level = "books" if by_book else "instances"
    if metric.level == "sample":
        assert metric.sample_value is not None
        values = [metric.sample_value(row) for row in rows]
        kept = [
            (value, book)
            for value, book in zip(values, books or [""] * len(rows), strict=True)
            if value is not None
        ]
        present = [value for value, _ in kept]
        if not present:
            return {"value": None, "ci_low": None, "ci_high": None, "n": 0}
        clusters = [book for _, book in kept] if by_book else None
        if all(isinstance(value, bool) for value in present):
            successes = sum(1 for value in present if value)
            low, high = wilson_interval(successes, len(present))
            if clusters is not None and len(set(clusters)) >= MIN_BOOKS:
                low, high = cluster_share_interval([bool(v) for v in present], clusters)
            return {
                "value": successes / len(present),
                "ci_low": low,
                "ci_high": high,
                "n": len(present),
                "successes": successes,
                "level": level,
            }
        floats = np.asarray([float(value) for value in present], dtype=np.float64)
        interval = cluster_mean_interval(floats, clusters)
        return {
            "value": float(np.mean(floats)),
            "ci_low": _finite(interval.low),
            "ci_high": _finite(interval.high),
            "n": len(present),
            "level": level,
        }
    assert metric.corpus_value is not None
    corpus_value = metric.corpus_value
    value = corpus_value(rows)
    if value is None or not rows:
        return {"value": value, "ci_low": None, "ci_high": None, "n": len(rows)}
    row_list = list(rows)

    def on_subset(indices: np.ndarray) -> float:
        subset = corpus_value([row_list[int(i)] for i in indices])
        return math.nan if subset is None else subset

    jackknifed = jackknife_interval(on_subset, len(row_list), books if by_book else None)
    return {"value": value, "ci_low": _finite(jackknifed.low), "ci_high": _finite(jackknifed.high),
            "n": len(rows), "level": level}  # fmt: skip


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _books(rows: Sequence[SampleRow]) -> list[str] | None:
    """Each row's book, or None when any row names none."""
    books = [getattr(row, "book_id", None) for row in rows]
    return None if any(book is None for book in books) else [str(book) for book in books]


def summarise_rows(task: Task[Any, Any], rows: Sequence[SampleRow], model: str) -> dict[str, Any]:
    """``results.json`` of a run: every metric per x value and overall, plus the task's extras."""
    rows = sorted(rows, key=lambda row: row.key)
    metrics = task.metrics()
    field = task.x_axis.field
    by_x: dict[Hashable, list[SampleRow]] = {}
    for row in rows:
        by_x.setdefault(x_value(row, field), []).append(row)
    table: dict[str, Any] = {}
    for x in sorted(by_x, key=group_sort_key):
        group = by_x[x]
        table[str(x)] = {
            "x": x,
            "n": len(group),
            "metrics": {metric.name: metric_value(metric, group) for metric in metrics},
            "extras": task.group_extras(group),
        }
    instance_ids = {getattr(row, "id", None) or row.key.rsplit("@", 1)[0] for row in rows}
    return {
        "layout_version": RESULTS_LAYOUT_VERSION,
        "task": task.name,
        "model": model,
        "chance": task.chance(rows),
        "primary_metric": task.primary_metric,
        "x_axis": {"field": field, "label": task.x_axis.label, "scale": task.x_axis.scale},
        "metrics": {
            metric.name: {
                "level": metric.level,
                "higher_is_better": metric.higher_is_better,
                "interval": _interval_kind(metric),
                "description": metric.description,
            }
            for metric in metrics
        },
        "by_x": table,
        "overall": {
            "n": len(rows),
            "metrics": {metric.name: metric_value(metric, rows) for metric in metrics},
        },
        "counts": {"instances": len(instance_ids), "samples": len(rows)},
        "settings": task.settings.model_dump(mode="json"),
        "notes": task.notes(),
    }


def _interval_kind(metric: Metric) -> str:
    by_book = "by book where the rows name five or more books, else by instance"
    if metric.level == "corpus":
        return f"95% delete-one-book jackknife with t, {by_book}"
    return (
        f"95%, {by_book}: yes/no values the hull of the exact binomial and the logit-scale CR2 interval "
        "(Wilson's by instance), numbers CR2 with t"
    )
