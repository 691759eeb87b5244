"""The one shape of ``results.json`` for every task: metrics with 95% intervals per x-axis value.

    {"task", "model", "chance", "primary_metric",
     "x_axis": {"field", "label", "scale"},
     "metrics": {name: {"level", "higher_is_better", "interval", "description"}},
     "by_x": {x: {"n", "metrics": {name: {"value", "ci_low", "ci_high", "n"}}, "extras": {...}}},
     "overall": {"n", "metrics": {...}},
     "counts": {"instances", "samples"}, "notes": {...}}

``longread report`` reads only this, so a new task gets its table and memory
curve without report code. Computed from rows sorted by key with seeded
bootstraps, so the file is byte-identical after a kill and resume.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from longread.evaluation.task import Metric, SampleRow, Task, XValue
from longread.metrics import bootstrap_interval, group_sort_key, wilson_interval

RESULTS_LAYOUT_VERSION = 2
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0


def x_value(row: SampleRow, field: str) -> XValue:
    value = getattr(row, field, None)
    if value is None and row.model_extra:
        value = row.model_extra.get(field)
    if not isinstance(value, int | float | str) or isinstance(value, bool):
        raise ValueError(f"row {row.key!r}: x-axis field {field!r} is {value!r}, not a number or a label")
    return value


def metric_value(metric: Metric, rows: Sequence[SampleRow]) -> dict[str, float | int | None]:
    """The metric over ``rows`` with its 95% interval (Wilson for yes/no values, bootstrap otherwise)."""
    if metric.level == "sample":
        assert metric.sample_value is not None
        values = [metric.sample_value(row) for row in rows]
        present = [value for value in values if value is not None]
        if not present:
            return {"value": None, "ci_low": None, "ci_high": None, "n": 0}
        if all(isinstance(value, bool) for value in present):
            successes = sum(1 for value in present if value)
            low, high = wilson_interval(successes, len(present))
            return {
                "value": successes / len(present),
                "ci_low": low,
                "ci_high": high,
                "n": len(present),
                "successes": successes,
            }
        floats = np.asarray([float(value) for value in present], dtype=np.float64)
        low, high = bootstrap_interval(
            floats, lambda data: float(np.mean(data)), BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
        )
        return {"value": float(np.mean(floats)), "ci_low": low, "ci_high": high, "n": len(present)}
    assert metric.corpus_value is not None
    corpus_value = metric.corpus_value
    value = corpus_value(rows)
    if value is None or not rows:
        return {"value": value, "ci_low": None, "ci_high": None, "n": len(rows)}
    row_list = list(rows)

    def on_resample(indices: np.ndarray) -> float:
        resampled = corpus_value([row_list[int(i)] for i in indices])
        return math.nan if resampled is None else resampled

    low, high = bootstrap_interval(
        np.arange(len(row_list), dtype=np.float64), on_resample, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
    )
    return {"value": value, "ci_low": low, "ci_high": high, "n": len(rows)}


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
    if metric.level == "corpus":
        return (
            f"95% percentile bootstrap over samples ({BOOTSTRAP_RESAMPLES} resamples, seed {BOOTSTRAP_SEED})"
        )
    return "95% Wilson (yes/no values) or percentile bootstrap of the mean (numbers)"
