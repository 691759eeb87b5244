"""``memory.png``: each book's cloze, extraction and min-k scores with their intervals."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from longread.files import atomic_save_png
from longread.probes.memory.book import BookMemory

PANELS = (
    ("cloze", "name cloze (share right)"),
    ("extraction_exact", "extraction (share exact)"),
    ("min_k", "min-k% (mean log-prob, nats)"),
)


def plot_memory(summaries: Sequence[BookMemory], path: Path) -> Path:
    figure = Figure(figsize=(4.2 * len(PANELS), 0.5 * len(summaries) + 2.0), dpi=120, layout="constrained")
    names = [summary.book for summary in summaries]
    for index, (key, title) in enumerate(PANELS):
        axes: Any = figure.add_subplot(1, len(PANELS), index + 1)
        for row, summary in enumerate(summaries):
            score = summary.scores.get(key) or {}
            if score.get("value") is None:
                continue
            colour = "tab:red" if summary.remembered else "tab:blue"
            value, low, high = score["value"], score["ci_low"], score["ci_high"]
            axes.errorbar(
                [value], [row], xerr=[[value - low], [high - value]], fmt="o", color=colour, capsize=3
            )
        axes.set_yticks(range(len(names)), names)
        axes.set_title(title, fontsize="medium")
        axes.invert_yaxis()
    figure.suptitle("memory per book (red: remembered by the rule)", fontsize="medium")
    return atomic_save_png(figure, path)
