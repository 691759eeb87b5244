"""The markdown table of a report: one row per run × prefix length, with a caption."""

from __future__ import annotations

import math
from collections.abc import Sequence

from longread.report.load import RunReport

_TASK_TITLES = {"chapterbreak": "ChapterBreak"}


def task_title(runs: Sequence[RunReport]) -> str:
    tasks = sorted({run.task for run in runs})
    return " / ".join(_TASK_TITLES.get(task, task) for task in tasks)


def chance_levels(runs: Sequence[RunReport]) -> list[float]:
    return sorted({round(run.chance, 4) for run in runs if run.chance is not None})


def format_caption(runs: Sequence[RunReport]) -> str:
    """What the numbers are: task, chance level, interval kind, and each run's model and data."""
    chance = "; ".join(_chance_text(level) for level in chance_levels(runs)) or "not given"
    lines = [
        f"**{task_title(runs)}** — accuracy in % with 95% Wilson intervals; chance {chance}; "
        "word ppl = word-level perplexity of the gold continuation, pooled over samples.",
        "",
    ]
    for run in runs:
        data = f"`{run.data_path}`" if run.data_path else "data file not recorded"
        if run.data_sha256:
            data += f" (sha256 {run.data_sha256[:12]}…)"
        lines.append(f"- **{run.label}**: run `{run.path}`, data {data}")
    return "\n".join(lines)


def format_table(runs: Sequence[RunReport]) -> str:
    """A markdown table, one row per run × prefix length (print it, or see :func:`build_report`)."""
    show_truncated = any(
        result.truncated_prefix is not None for run in runs for result in run.by_prefix_length.values()
    )
    header = ["model", "prefix (tokens)", "n", "accuracy % [95% CI]", "word ppl"]
    align = ["---", "---:", "---:", "---:", "---:"]
    if show_truncated:
        header.append("truncated prefixes")
        align.append("---:")
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    for run in runs:
        for length, result in run.by_prefix_length.items():
            cells = [
                run.label,
                format_tokens(length),
                str(result.n),
                _accuracy_cell(result.accuracy, result.ci_low, result.ci_high),
                _number(result.word_perplexity, ".1f"),
            ]
            if show_truncated:
                cells.append("—" if result.truncated_prefix is None else str(result.truncated_prefix))
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


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


def _accuracy_cell(accuracy: float | None, low: float | None, high: float | None) -> str:
    if accuracy is None or math.isnan(accuracy):
        return "—"
    cell = f"{100 * accuracy:.1f}"
    if low is not None and high is not None and not (math.isnan(low) or math.isnan(high)):
        cell += f" [{100 * low:.1f}–{100 * high:.1f}]"
    return cell


def _number(value: float | None, spec: str) -> str:
    return "—" if value is None or math.isnan(value) else format(value, spec)
