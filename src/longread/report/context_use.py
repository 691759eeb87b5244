"""The context-use report: did the model use the distant context?

Each controlled run (``shuffle`` / ``replace`` / ``none`` beyond the last K tokens) is paired with the
intact run instance by instance (:mod:`longread.report.paired`): per x value (prefix length, reading
position, document length) the intact score, the controlled score, their paired difference with a 95%
bootstrap interval and, for right/wrong metrics, McNemar's p — and one sentence a reader can quote. The
plot draws the score against the tokens kept intact, one line per control, with the intact score and
chance. Written as ``context_use.md``, ``context_use.json`` and ``context_use.png``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from longread.evaluation.registry import make_task
from longread.files import atomic_write_text
from longread.report.load import RunReport, load_runs
from longread.report.paired import NotPairable, paired_differences

REPORT_MD = "context_use.md"
REPORT_JSON = "context_use.json"
REPORT_PNG = "context_use.png"
VERBS = {"shuffle": "shuffling", "replace": "replacing", "none": "dropping"}
COLOURS = {"shuffle": "tab:orange", "replace": "tab:red", "none": "tab:purple"}


@dataclass(frozen=True)
class ContextUseRow:
    x: Any
    control: str
    keep_last: int
    metric: str
    paired: int
    intact: float
    controlled: float
    difference: float
    ci_low: float
    ci_high: float
    p: float | None
    sentence: str


def _control_of(run: RunReport) -> tuple[str, int]:
    config = json.loads((run.path / "config.json").read_text(encoding="utf-8")).get("config", {})
    settings = config.get("settings", {})
    return str(settings.get("context_control", "intact")), int(settings.get("keep_last", 0))


def _number(value: float) -> str:
    return f"{value:+.2f}".replace("-", "−")


def sentence(control: str, keep_last: int, metric: str, difference: float, low: float, high: float,
             p: float | None, higher_is_better: bool) -> str:  # fmt: skip
    """One quotable sentence on one paired difference (values as fractions for right/wrong metrics)."""
    part = "the whole context" if keep_last == 0 else f"everything before the last {keep_last:,} tokens"
    what = f"{VERBS.get(control, control)} {part}"
    interval = f"{_number(difference)} [{_number(low)}, {_number(high)}]"
    p_text = "" if p is None else (" (p < 0.001)" if p < 0.001 else f" (p = {p:.3f})")
    if not (low > 0 or high < 0):
        return f"{what} changes {metric} by nothing measurable ({interval})"
    worse = (difference < 0) == higher_is_better
    verb = "lowers" if difference < 0 else "raises"
    near, far = sorted((abs(low), abs(high)))
    size = f"{abs(difference):.2f} [{near:.2f}, {far:.2f}]"
    meaning = "the model uses the distant context" if worse else "the model does better without it"
    return f"{what} {verb} {metric} by {size}{p_text}: {meaning}"


def context_use(intact: Path, controlled: Sequence[Path]) -> tuple[list[ContextUseRow], list[RunReport]]:
    """The paired rows of every controlled run against the intact one, and the loaded runs."""
    runs = load_runs([intact, *controlled])
    first = runs[0]
    task = make_task(first.task)
    metric = next(m for m in task.metrics() if m.name == first.primary_metric)
    rows: list[ContextUseRow] = []
    for later in runs[1:]:
        control, keep = _control_of(later)
        try:
            differences = paired_differences([first, later], ())
        except NotPairable:
            continue
        for d in differences:
            words = sentence(control, keep, d.metric, d.difference, d.ci_low, d.ci_high, d.mcnemar_p,
                             metric.higher_is_better)  # fmt: skip
            rows.append(
                ContextUseRow(
                    x=d.x,
                    control=control,
                    keep_last=keep,
                    metric=d.metric,
                    paired=d.paired,
                    intact=d.value_first,
                    controlled=d.value_later,
                    difference=d.difference,
                    ci_low=d.ci_low,
                    ci_high=d.ci_high,
                    p=d.mcnemar_p,
                    sentence=words,
                )
            )
    rows.sort(key=lambda row: (str(row.x), row.control, row.keep_last))
    return rows, runs


def _finite(values: dict[str, Any]) -> dict[str, Any]:
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in values.items()}


def write_context_use(intact: Path, controlled: Sequence[Path], out: Path) -> list[Path]:
    """``context_use.md``, ``.json`` and ``.png`` in ``out``; returns their paths."""
    rows, runs = context_use(intact, controlled)
    out.mkdir(parents=True, exist_ok=True)
    chance = runs[0].chance
    lines = [
        f"# Does the model use what it read? — {runs[0].label} on {runs[0].task}",
        "",
        "Each control perturbs the document beyond its last K tokens and is paired with the intact run "
        "instance by instance: difference = controlled − intact, 95% paired bootstrap interval; p: "
        "McNemar, exact, two-sided (right/wrong metrics).",
        "",
        f"| {runs[0].x_axis.label} | control | K kept | paired | intact | controlled "
        "| difference [95% CI] | p |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        p = "" if row.p is None else ("< 0.001" if row.p < 0.001 else f"{row.p:.3f}")
        lines.append(
            f"| {row.x} | {row.control} | {row.keep_last:,} | {row.paired} | {row.intact:.3f} | "
            f"{row.controlled:.3f} | {_number(row.difference)} "
            f"[{_number(row.ci_low)}, {_number(row.ci_high)}] | {p} |"
        )
    lines += ["", *(f"- At {runs[0].x_axis.label} {row.x}: {row.sentence}." for row in rows), ""]
    if chance is not None:
        lines.append(f"Chance: {chance:.3f}.")
    lines.append(f"\n![score against tokens kept intact]({REPORT_PNG})\n")
    md = out / REPORT_MD
    atomic_write_text(md, "\n".join(lines))
    payload = {
        "intact": str(intact),
        "controlled": [str(path) for path in controlled],
        "chance": chance,
        "rows": [_finite(asdict(row)) for row in rows],
    }
    js = out / REPORT_JSON
    atomic_write_text(js, json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")
    png = plot_context_use(rows, chance, runs[0].x_axis.label, out / REPORT_PNG)
    return [md, js, png]


def plot_context_use(rows: Sequence[ContextUseRow], chance: float | None, x_label: str, path: Path) -> Path:
    """Score against tokens kept intact, one panel per x value, one line per control; the intact score
    (solid grey) and chance (dotted) drawn across."""
    xs = sorted({str(row.x) for row in rows}) or ["-"]
    figure = Figure(figsize=(5.0 * len(xs), 4.0), dpi=130, layout="constrained")
    for index, x in enumerate(xs):
        axes = figure.add_subplot(1, len(xs), index + 1)
        here = [row for row in rows if str(row.x) == x]
        for control in sorted({row.control for row in here}):
            line = sorted((row for row in here if row.control == control), key=lambda row: row.keep_last)
            keeps = [max(row.keep_last, 1) for row in line]
            values = [row.controlled for row in line]
            # the paired difference's interval, drawn around the controlled score
            errors = [
                [max(0.0, row.controlled - (row.intact + row.ci_low)) for row in line],
                [max(0.0, (row.intact + row.ci_high) - row.controlled) for row in line],
            ]
            axes.errorbar(keeps, values, yerr=errors, marker="o", capsize=3, label=control,
                          color=COLOURS.get(control))  # fmt: skip
        if here:
            axes.axhline(here[0].intact, color="grey", label="intact")
        if chance is not None:
            axes.axhline(chance, color="black", linestyle=":", label="chance")
        axes.set_xscale("symlog", linthresh=1)
        axes.set_xlabel("tokens kept intact (K; 0 drawn at 1)")
        axes.set_ylabel(here[0].metric if here else "score")
        axes.set_title(f"{x_label} {x}")
        axes.legend(fontsize="small")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.tmp")
    try:
        figure.savefig(partial, format="png")
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
    return path
