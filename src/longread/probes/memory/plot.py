"""``memory.png``: each book's cloze, extraction and min-k scores with their intervals."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from longread.files import atomic_save_png
from longread.probes.memory.book import BookMemory
from longread.probes.memory.rule import CANNOT_TELL

COLOURS = {"True": "tab:red", "False": "tab:blue", CANNOT_TELL: "tab:gray"}

PANELS = (
    ("cloze", "name cloze (share right)"),
    ("cloze-rank", "ranked cloze (share first; dashed: chance)"),
    ("extraction_exact", "extraction (share exact)"),
    ("min_k", "min-k% (mean log-prob, nats)"),
)


def plot_memory(summaries: Sequence[BookMemory], path: Path) -> Path:
    names = [summary.book for summary in summaries]
    panels = [(key, title) for key, title in PANELS if any(key in summary.scores for summary in summaries)]
    panels = panels or list(PANELS)
    figure = Figure(figsize=(4.2 * len(panels), 0.5 * len(summaries) + 2.0), dpi=120, layout="constrained")
    for index, (key, title) in enumerate(panels):
        axes: Any = figure.add_subplot(1, len(panels), index + 1)
        for row, summary in enumerate(summaries):
            score = summary.scores.get(key) or {}
            if score.get("value") is None:
                continue
            colour = COLOURS.get(str(summary.remembered), "tab:gray")
            value, low, high = score["value"], score["ci_low"], score["ci_high"]
            hollow = score.get("verdict") == CANNOT_TELL  # the model did not do the task: no evidence
            axes.errorbar([value], [row], xerr=[[value - low], [high - value]], fmt="o", color=colour,
                          capsize=3, markerfacecolor="white" if hollow else colour)  # fmt: skip
            if score.get("chance") is not None:
                axes.plot([score["chance"]] * 2, [row - 0.4, row + 0.4], "k--", linewidth=1)
        axes.set_yticks(range(len(names)), names)
        axes.set_title(title, fontsize="medium")
        axes.invert_yaxis()
    figure.suptitle(
        "memory per book (red: remembered, blue: not, grey: cannot tell; hollow: the probe cannot tell)",
        fontsize="medium",
    )
    return atomic_save_png(figure, path)
