"""The memory curve: a task's primary metric against its x-axis, a line per run (or run × group)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, NullLocator

from longread.files import atomic_save_png
from longread.metrics import group_sort_key
from longread.report.load import MetricValue, RunReport
from longread.report.table import chance_levels, format_x, task_title

# Lines of different runs are shifted apart by this fraction of an octave, so error bars do not overlap.
_DODGE_OCTAVES = 0.06


@dataclass(frozen=True)
class Series:
    """One line of a memory-curve plot: its label, its points and whether it is a baseline."""

    label: str
    points: dict[int | float | str, MetricValue]
    dashed: bool = False


def plot_memory_curve(runs: Sequence[RunReport], path: Path) -> Path:
    """Draw each run's primary metric against its x-axis with 95% intervals and write a PNG (atomically).

    Prefix lengths get a log2 axis; other numeric axes a linear one; labels (buckets) evenly spaced.
    Baseline runs (options only) are dashed.
    """
    metric_name = runs[0].primary_metric if runs else "accuracy"
    series = [
        Series(
            run.label,
            {x: m for x in run.points if (m := run.metric(x, metric_name)) is not None},
            dashed=run.baseline is not None,
        )
        for run in runs
    ]
    title = f"{task_title(runs)}: {metric_name.replace('_', ' ')} vs {runs[0].x_axis.label if runs else 'x'}"
    return draw_curves(series, runs, metric_name, title, path)


def plot_every_metric(runs: Sequence[RunReport], metrics: Sequence[str], path: Path) -> Path:
    """One panel per metric (BLEU-1, BLEU-4, ROUGE-L, METEOR …), each like the memory curve: for tasks
    scored by several metrics at once."""
    columns = min(3, len(metrics))
    rows = math.ceil(len(metrics) / columns)
    figure = Figure(figsize=(5.2 * columns, 3.8 * rows), dpi=120, layout="constrained")
    for index, name in enumerate(metrics):
        series = [
            Series(
                run.label,
                {x: m for x in run.points if (m := run.metric(x, name)) is not None},
                dashed=run.baseline is not None,
            )
            for run in runs
        ]
        axes = figure.add_subplot(rows, columns, index + 1)
        _draw_on(axes, series, runs, name, name.replace("_", " "), legend=index == 0)
    figure.suptitle(f"{task_title(runs)}: every metric vs {runs[0].x_axis.label if runs else 'x'}")
    return _save(figure, path)


def draw_curves(
    series: Sequence[Series], runs: Sequence[RunReport], metric_name: str, title: str, path: Path
) -> Path:
    """The plot itself: one line per series with error bars, chance lines, axes from the runs' x-axis."""
    figure = Figure(figsize=(8, 5), dpi=150, layout="constrained")
    _draw_on(figure.add_subplot(), series, runs, metric_name, title)
    return _save(figure, path)


def _save(figure: Figure, path: Path) -> Path:
    return atomic_save_png(figure, path)


def _draw_on(
    axes: Axes,
    series: Sequence[Series],
    runs: Sequence[RunReport],
    metric_name: str,
    title: str,
    *,
    legend: bool = True,
) -> None:
    scale = runs[0].x_axis.scale if runs else "linear"
    xs_all = sorted({x for line in series for x in line.points}, key=group_sort_key)
    categorical = scale == "category" or any(isinstance(x, str) for x in xs_all)
    position = {x: float(i) for i, x in enumerate(xs_all)} if categorical else {x: float(x) for x in xs_all}  # type: ignore[arg-type]
    percent = any(m.is_proportion for line in series for m in line.points.values())
    factor = 100.0 if percent else 1.0
    top = 0.0
    for index, line_series in enumerate(series):
        points = [
            (x, m.value, m.ci_low, m.ci_high)
            for x in xs_all
            if (m := line_series.points.get(x)) is not None
            and m.value is not None
            and not math.isnan(m.value)
        ]
        if not points:
            continue
        offset = (index - (len(series) - 1) / 2) * _DODGE_OCTAVES
        if scale == "log2" and not categorical:
            xs = [position[x] * 2**offset for x, *_ in points]
        else:
            span = (max(position.values()) - min(position.values())) or 1.0
            xs = [position[x] + offset * span / 4 for x, *_ in points]
        ys = [factor * value for _, value, _, _ in points]
        lows = [factor * (low if low is not None else value) for _, value, low, _ in points]
        highs = [factor * (high if high is not None else value) for _, value, _, high in points]
        _draw_line(axes, line_series, xs, ys, lows, highs, band=len(series) == 1)
        top = max(top, *highs)
    for level in chance_levels(runs) if percent else []:
        axes.axhline(
            100 * level, color="0.35", linestyle=":", linewidth=1.2, label=f"chance ({100 * level:.1f}%)"
        )
        top = max(top, 100 * level)
    ticks = [position[x] for x in xs_all]
    if scale == "log2" and not categorical:
        axes.set_xscale("log", base=2)
        if ticks:
            axes.set_xlim(ticks[0] / 2**0.35, ticks[-1] * 2**0.35)
    if ticks:
        axes.xaxis.set_major_locator(FixedLocator(ticks))
        axes.set_xticklabels([format_x(x, scale) for x in xs_all])
    axes.xaxis.set_minor_locator(NullLocator())
    if percent:
        axes.set_ylim(0, min(100.0, max(10.0, math.ceil((top + 5) / 10) * 10)))
    x_label = runs[0].x_axis.label if runs else "x"
    axes.set_xlabel(x_label + (" (log scale)" if scale == "log2" and not categorical else ""))
    metric_title = metric_name.replace("_", " ")
    axes.set_ylabel(f"{metric_title}{' (%)' if percent else ''}, 95% CI")
    axes.set_title(title)
    axes.grid(True, which="major", alpha=0.3)
    if legend:
        axes.legend(loc="best", fontsize="small", frameon=True)


def _draw_line(
    axes: Axes,
    line_series: Series,
    xs: list[float],
    ys: list[float],
    lows: list[float],
    highs: list[float],
    *,
    band: bool,
) -> None:
    """One series: the line with its error bars, and with ``band`` its 95% band shaded (with several
    lines, overlapping bands muddy the picture; error bars suffice)."""
    (line,) = axes.plot(
        xs,
        ys,
        marker="o",
        linewidth=1.8,
        label=line_series.label,
        linestyle="--" if line_series.dashed else "-",
        markerfacecolor="white" if line_series.dashed else None,
    )
    if band:
        axes.fill_between(xs, lows, highs, color=line.get_color(), alpha=0.15, linewidth=0)
    axes.errorbar(
        xs,
        ys,
        yerr=[
            [max(0.0, y - low) for y, low in zip(ys, lows, strict=True)],
            [max(0.0, h - y) for y, h in zip(ys, highs, strict=True)],
        ],
        fmt="none",
        ecolor=line.get_color(),
        capsize=3,
        linewidth=1,
    )
