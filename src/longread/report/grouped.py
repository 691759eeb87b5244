"""The paper's side-by-side comparisons: a task's primary metric per group of samples × x-axis value.

``longread report RUN… --group-by suffix_type,negatives_from`` puts, for each
run, one line per group (chapter / cause / dialogue, in-book / out-of-book …)
and one column per x value (prefix length), each cell the metric with its 95%
interval. Groups come from any field of the task's per-sample rows, so every
task gets this without report code.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longread.errors import LongreadError
from longread.evaluation.registry import make_task
from longread.evaluation.results import metric_value, x_value
from longread.evaluation.rows import read_typed_rows
from longread.metrics import group_sort_key
from longread.report.load import MetricValue, RunReport
from longread.report.plot import Series, draw_curves
from longread.report.table import format_x, task_title
from longread.runs.layout import SELECTION_FILE


class GroupFieldError(LongreadError):
    pass


@dataclass(frozen=True)
class GroupLine:
    run: RunReport
    group: str
    cells: dict[Any, MetricValue]


def grouped_lines(runs: Sequence[RunReport], fields: Sequence[str]) -> list[GroupLine]:
    """The primary metric of every run × group (values of ``fields`` in its rows) × x value."""
    lines: list[GroupLine] = []
    metric_name = runs[0].primary_metric if runs else "accuracy"
    for run in runs:
        task = make_task(run.task)
        metric = next((m for m in task.metrics() if m.name == metric_name), None)
        if metric is None:
            raise GroupFieldError(f"{run.path}: task {run.task!r} has no metric {metric_name!r}")
        rows = read_typed_rows(Path(run.path), task.row_model)
        selected = selected_keys(Path(run.path))
        if selected is not None:  # a run resumed with a smaller --sample keeps the other rows on disk
            rows = [row for row in rows if row.key in selected]
        groups: dict[tuple[str, ...], dict[Any, list[Any]]] = {}
        for row in rows:
            key = tuple(field_value(run.path, row, name) for name in fields)
            groups.setdefault(key, {}).setdefault(x_value(row, task.x_axis.field), []).append(row)
        for key in sorted(groups):
            cells = {x: _as_metric(metric_value(metric, members)) for x, members in groups[key].items()}
            lines.append(GroupLine(run, " / ".join(key), cells))
    return lines


def grouped_table(runs: Sequence[RunReport], fields: Sequence[str]) -> str:
    """A markdown table: rows = run × group, columns = x values, cells = primary metric [95% CI]."""
    lines_by_run = grouped_lines(runs, fields)
    scale = runs[0].x_axis.scale if runs else "linear"
    columns = sorted({x for line in lines_by_run for x in line.cells}, key=group_sort_key)
    header = ["model", " / ".join(fields), *[format_x(x, scale) for x in columns]]
    lines = [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(["---", "---", *["---:"] * len(columns)]) + " |",
    ]
    for line in lines_by_run:
        values = [_cell(line.cells.get(x)) for x in columns]
        lines.append("| " + " | ".join([line.run.label, line.group, *values]) + " |")
    return "\n".join(lines)


def plot_grouped_curves(runs: Sequence[RunReport], fields: Sequence[str], path: Path) -> Path:
    """The memory curve, a line per run × group (NarrativeXL's forgetting curve per question type)."""
    metric_name = runs[0].primary_metric if runs else "accuracy"
    several_runs = len(runs) > 1
    series = [
        Series(
            f"{line.run.label}: {line.group}" if several_runs else line.group,
            line.cells,
            dashed=line.run.baseline is not None,
        )
        for line in grouped_lines(runs, fields)
    ]
    x_label = runs[0].x_axis.label if runs else "x"
    title = f"{task_title(runs)}: {metric_name.replace('_', ' ')} vs {x_label}, by {', '.join(fields)}"
    if not several_runs and runs:
        title += f" — {runs[0].label}"
    return draw_curves(series, runs, metric_name, title, path)


def selected_keys(run_dir: Path) -> set[str] | None:
    """The keys the run's results cover (``selection.json``), or None for runs written before it existed."""
    path = run_dir / SELECTION_FILE
    if not path.exists():
        return None
    try:
        keys = json.loads(path.read_text(encoding="utf-8"))["keys"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise GroupFieldError(f"{path}: not a selection file; rerun the evaluation with --resume") from None
    return {str(key) for key in keys}


def field_value(path: Path, row: Any, name: str) -> str:
    value = getattr(row, name, None)
    if value is None and row.model_extra:
        value = row.model_extra.get(name)
    if (
        value is None
        and name not in type(row).model_fields
        and not (row.model_extra and name in row.model_extra)
    ):
        raise GroupFieldError(
            f"{path}: rows have no field {name!r}; fields: {', '.join(type(row).model_fields)}"
        )
    return "—" if value is None else str(value)


def _as_metric(value: dict[str, Any]) -> MetricValue:
    successes = value.get("successes")
    return MetricValue(
        value=value.get("value"),
        ci_low=value.get("ci_low"),
        ci_high=value.get("ci_high"),
        n=int(value.get("n") or 0),
        successes=successes if isinstance(successes, int) else None,
    )


def _cell(metric: MetricValue | None) -> str:
    if metric is None or metric.value is None:
        return "—"
    scale = 100.0 if metric.is_proportion else 1.0
    cell = f"{scale * metric.value:.1f}"
    if metric.ci_low is not None and metric.ci_high is not None:
        cell += f" [{scale * metric.ci_low:.1f}–{scale * metric.ci_high:.1f}]"
    return cell + f" (n={metric.n})"
