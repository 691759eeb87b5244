"""The markdown table of a report: one row per run × prefix length, with a caption."""

from __future__ import annotations

import math
from collections.abc import Sequence

from longread.report.load import MetricValue, RunReport

_TASK_TITLES = {
    "chapterbreak": "ChapterBreak",
    "narrativexl": "NarrativeXL",
    "narrativexl-summaries": "NarrativeXL summaries",
}


def task_title(runs: Sequence[RunReport]) -> str:
    tasks = sorted({run.task for run in runs})
    return " / ".join(_TASK_TITLES.get(task, task) for task in tasks)


def chance_levels(runs: Sequence[RunReport]) -> list[float]:
    return sorted({round(run.chance, 4) for run in runs if run.chance is not None})


def format_caption(runs: Sequence[RunReport]) -> str:
    """What the numbers are: task, chance level, interval kind, and each run's model and data."""
    chance = "; ".join(_chance_text(level) for level in chance_levels(runs)) or "not given"
    names = metric_names(runs)
    lines = [
        f"**{task_title(runs)}** — {', '.join(names)} with 95% intervals (Wilson for yes/no outcomes, "
        f"shown in %; seeded bootstrap otherwise); chance {chance}.",
        "",
    ]
    for run in runs:
        data = f"`{run.data_path}`" if run.data_path else "data file not recorded"
        if run.data_sha256:
            data += f" (sha256 {run.data_sha256[:12]}…)"
        lines.append(f"- **{run.label}**: run `{run.path}`, data {data}")
    return "\n".join(lines)


def format_table(runs: Sequence[RunReport]) -> str:
    """A markdown table, one row per run × x-axis value, every metric with its interval."""
    names = metric_names(runs)
    extras = [name for name in dict.fromkeys(e for run in runs for e in run.report_extras)]
    x_label = runs[0].x_axis.label if runs else "x"
    header = [
        "model",
        x_label,
        "n",
        *[metric_header(runs, name) for name in names],
        *[name.replace("_", " ") for name in extras],
    ]
    align = ["---", "---:", "---:", *["---:"] * len(names), *["---:"] * len(extras)]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    for run in runs:
        for x, point in run.points.items():
            cells = [run.label, format_x(x, run.x_axis.scale), str(point.n)]
            cells += [metric_cell(point.metrics.get(name)) for name in names]
            cells += ["—" if point.extras.get(name) is None else str(point.extras[name]) for name in extras]
            lines.append("| " + " | ".join(cells) + " |")
        if run.overall is not None and len(run.points) > 1:
            cells = [run.label, "**all**", str(run.overall.n)]
            cells += [metric_cell(run.overall.metrics.get(name)) for name in names]
            cells += ["" for _ in extras]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_x(x: object, scale: str) -> str:
    if isinstance(x, int) and scale == "log2":
        return format_tokens(x)
    return str(x)


def metric_names(runs: Sequence[RunReport]) -> list[str]:
    """The primary metric first, then the others in the order the runs give them."""
    names: dict[str, None] = {}
    for run in runs:
        names.setdefault(run.primary_metric, None)
    for run in runs:
        for point in run.points.values():
            for name in point.metrics:
                names.setdefault(name, None)
    # a metric no run has a value for (word perplexity of a ranker) is left out
    return [
        name
        for name in names
        if any(
            (m := run.metric(x, name)) is not None and m.value is not None for run in runs for x in run.points
        )
    ]


def metric_header(runs: Sequence[RunReport], name: str) -> str:
    proportion = any(
        (m := run.metric(x, name)) is not None and m.is_proportion for run in runs for x in run.points
    )
    title = name.replace("_", " ")
    return f"{title} % [95% CI]" if proportion else f"{title} [95% CI]"


def metric_cell(metric: MetricValue | None) -> str:
    if metric is None or metric.value is None or math.isnan(metric.value):
        return "—"
    scale, spec = (100.0, ".1f") if metric.is_proportion else (1.0, _spec(metric.value))
    cell = format(scale * metric.value, spec)
    low, high = metric.ci_low, metric.ci_high
    if low is not None and high is not None and not (math.isnan(low) or math.isnan(high)):
        cell += f" [{format(scale * low, spec)}–{format(scale * high, spec)}]"
    return cell


def _spec(value: float) -> str:
    return ".1f" if abs(value) >= 10 else ".3f"


def format_tokens(length: int) -> str:
    """256, 512, 1K, 2K … (powers of two from 1024 on are written in K)."""
    if length >= 1024 and length % 1024 == 0:
        return f"{length // 1024}K"
    return str(length)


def _chance_text(level: float) -> str:
    candidates = round(1 / level) if level > 0 else 0
    one_in = (
        f" (1 in {candidates})" if candidates and math.isclose(1 / candidates, level, abs_tol=5e-4) else ""
    )
    return f"{100 * level:.1f}%{one_in}"
