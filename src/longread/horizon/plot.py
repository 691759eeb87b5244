"""``horizon.png``: per prefix length, accuracy's change against the tokens kept intact (one line per
model, 95% intervals as bars, the ±δ band shaded), each model's used context marked where the gate
calibrated it (a filled marker) or not (hollow)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib.figure import Figure

from longread.files import atomic_save_png
from longread.horizon.verdicts import LengthAnswer


def plot_horizon(
    answers: Sequence[LengthAnswer], lengths: Sequence[int], delta: float, control: str, path: Path
) -> Path:
    figure = Figure(figsize=(5.5 * len(lengths), 4.2), dpi=130, layout="constrained")
    models = list(dict.fromkeys(a.model for a in answers))
    colours = [f"C{i}" for i in range(len(models))]
    for index, length in enumerate(lengths):
        axes = figure.add_subplot(1, len(lengths), index + 1)
        axes.axhspan(-delta, delta, color="grey", alpha=0.15, label=f"±{delta:g}")
        axes.axhline(0, color="black", linewidth=0.8)
        ticks: set[int] = set()
        for model, colour in zip(models, colours, strict=True):
            answer = next((a for a in answers if a.model == model and a.length == length), None)
            if answer is None or not answer.keeps:
                continue
            rows = sorted(answer.keeps, key=lambda r: r.keep)
            xs = [_x(r.keep) for r in rows]
            ticks.update(r.keep for r in rows)
            ys = [r.scores.difference for r in rows]
            errors = [
                [y - r.scores.ci_low for y, r in zip(ys, rows, strict=True)],
                [r.scores.ci_high - y for y, r in zip(ys, rows, strict=True)],
            ]
            axes.errorbar(
                xs,
                ys,
                yerr=errors,
                marker="o",
                capsize=3,
                color=colour,
                label=f"{model} ({answer.paired} instances)",
            )
            if answer.used is not None:
                face = colour if answer.calibrated else "white"
                axes.plot(
                    [_x(answer.used)],
                    [0],
                    marker="v",
                    markersize=11,
                    color=colour,
                    markerfacecolor=face,
                    linestyle="none",
                )
        axes.set_xscale("log", base=2)
        axes.set_xticks([_x(k) for k in sorted(ticks)], [f"{k:,}" for k in sorted(ticks)])
        axes.minorticks_off()
        axes.set_xlabel(f"tokens kept intact (K); everything before them: {control}")
        axes.set_ylabel("accuracy, controlled − intact")
        axes.set_title(f"prefix length {length:,} (▼ used context; hollow: not calibrated)", fontsize="small")
        axes.legend(fontsize="x-small")
    return atomic_save_png(figure, path)


def _x(keep: int) -> float:
    """K on a log axis (K = 0, everything replaced, drawn at 8)."""
    return float(max(keep, 8))
