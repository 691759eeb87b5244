"""The accuracy-vs-prefix-length plot: one line per run with its 95% interval, and chance."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, NullLocator

from longread.report.load import RunReport
from longread.report.table import chance_levels, format_tokens, task_title

# Lines of different runs are shifted apart by this fraction of an octave, so error bars do not overlap.
_DODGE_OCTAVES = 0.06


def plot_accuracy_vs_prefix(runs: Sequence[RunReport], path: Path) -> Path:
    """Draw accuracy (%) against prefix length on a log2 axis and write it as a PNG (atomically)."""
    figure = Figure(figsize=(8, 5), dpi=150, layout="constrained")
    axes = figure.add_subplot()
    lengths = sorted({length for run in runs for length in run.by_prefix_length})
    top = 0.0
    for index, run in enumerate(runs):
        points = [
            (length, r.accuracy, r.ci_low, r.ci_high)
            for length, r in run.by_prefix_length.items()
            if r.accuracy is not None and not math.isnan(r.accuracy)
        ]
        if not points:
            continue
        shift = 2 ** ((index - (len(runs) - 1) / 2) * _DODGE_OCTAVES)
        xs = [length * shift for length, *_ in points]
        ys = [100 * accuracy for _, accuracy, _, _ in points]
        lows = [100 * (low if low is not None else accuracy) for _, accuracy, low, _ in points]
        highs = [100 * (high if high is not None else accuracy) for _, accuracy, _, high in points]
        (line,) = axes.plot(xs, ys, marker="o", linewidth=1.8, label=run.label)
        if len(runs) == 1:  # with several runs, overlapping bands muddy the picture; error bars suffice
            axes.fill_between(xs, lows, highs, color=line.get_color(), alpha=0.15, linewidth=0)
        axes.errorbar(
            xs,
            ys,
            yerr=[
                [y - low for y, low in zip(ys, lows, strict=True)],
                [h - y for y, h in zip(ys, highs, strict=True)],
            ],
            fmt="none",
            ecolor=line.get_color(),
            capsize=3,
            linewidth=1,
        )
        top = max(top, *highs)
    for level in chance_levels(runs):
        axes.axhline(
            100 * level, color="0.35", linestyle="--", linewidth=1.2, label=f"chance ({100 * level:.1f}%)"
        )
        top = max(top, 100 * level)
    axes.set_xscale("log", base=2)
    if lengths:
        axes.xaxis.set_major_locator(FixedLocator(lengths))
        axes.set_xticklabels([format_tokens(length) for length in lengths])
        axes.set_xlim(lengths[0] / 2**0.35, lengths[-1] * 2**0.35)
    axes.xaxis.set_minor_locator(NullLocator())
    axes.set_ylim(0, min(100.0, max(10.0, math.ceil((top + 5) / 10) * 10)))
    axes.set_xlabel("prefix length (tokens, log scale)")
    axes.set_ylabel("accuracy (%), 95% CI")
    axes.set_title(f"{task_title(runs)}: accuracy vs prefix length")
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(loc="best", fontsize="small", frameon=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.tmp")
    try:
        figure.savefig(partial, format="png")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path
