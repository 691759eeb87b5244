"""``longread report RUN_DIR… --out DIR``: a markdown table and a plot of one or more runs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longread.files import atomic_write_text
from longread.probes.memory.verdicts import MemoryVerdicts
from longread.report.agreement import AGREEMENT_HEADING
from longread.report.grouped import grouped_table, plot_grouped_curves
from longread.report.load import RunReport, load_runs
from longread.report.memory_split import MemorySplit, memory_splits, split_table
from longread.report.paired import NotPairable, PairedDifference, paired_differences, paired_table
from longread.report.plot import plot_every_metric, plot_memory_curve
from longread.report.software import DIFFERING_SOFTWARE, SAME_SOFTWARE, software_facts
from longread.report.table import format_caption, format_table, metric_names
from longread.report.versions import versions_table

REPORT_FILE = "report.md"
REPORT_JSON_FILE = "report.json"
PLOT_FILE = "memory_curve.png"
EVERY_METRIC_FILE = "every_metric.png"


@dataclass(frozen=True)
class ReportFiles:
    markdown: Path
    plot: Path
    table: str
    grouped_plot: Path | None = None
    every_metric_plot: Path | None = None
    """``every_metric.png``: a panel per metric, for tasks scored by several (MuLD: BLEU, ROUGE-L …)."""
    json_file: Path | None = None
    """``report.json``: the runs, ``--group-by`` and the paired differences, for other programs."""
    paired: tuple[PairedDifference, ...] = ()
    memory: tuple[MemorySplit, ...] = ()
    """``--memory``: each run's score on books the model remembers and on those it does not."""


def build_report(
    run_dirs: Sequence[Path],
    out_dir: Path,
    group_by: Sequence[str] = (),
    memory: MemoryVerdicts | None = None,
) -> ReportFiles:
    """Write ``report.md`` (caption, table, plot) and ``memory_curve.png`` into ``out_dir``.

    ``group_by`` (row fields, e.g. ``suffix_type``) adds a table of the primary metric
    per group × x value, the paper's side-by-side comparison, and a plot with a line
    per run × group (``memory_curve_by_<fields>.png``). With two runs or more it also compares each
    later run with the first instance by instance (:mod:`longread.report.paired`), in ``report.md`` and
    ``report.json``. ``memory`` (a memory probe's verdicts) splits every run's score by whether the model
    remembers the book (:mod:`longread.report.memory_split`).
    """
    if not run_dirs:
        raise ValueError("build_report needs at least one run directory")
    runs = load_runs([Path(path) for path in run_dirs])
    splits = memory_splits(runs, memory) if memory is not None else []
    out_dir.mkdir(parents=True, exist_ok=True)
    plot = plot_memory_curve(runs, out_dir / PLOT_FILE)
    table = format_table(runs)
    parts = [format_caption(runs), table]
    figures = [f"![memory curve]({PLOT_FILE})"]
    metrics = metric_names(runs)
    every_metric: Path | None = None
    if len(metrics) > 1:
        every_metric = plot_every_metric(runs, metrics, out_dir / EVERY_METRIC_FILE)
        figures.append(f"![every metric]({EVERY_METRIC_FILE})")
    grouped_plot: Path | None = None
    paired: list[PairedDifference] = []
    if group_by:
        grouped = grouped_table(runs, group_by)
        parts.append(f"By {', '.join(group_by)}:\n\n{grouped}")
        table = f"{table}\n\n{grouped}"
        grouped_plot = plot_grouped_curves(runs, group_by, out_dir / grouped_plot_name(group_by))
        figures.append(f"![memory curve by {', '.join(group_by)}]({grouped_plot.name})")
        compared = ""
        try:
            paired = paired_differences(runs, group_by)
            compared = paired_table(paired, runs[0].x_axis.scale)
        except NotPairable as exc:
            compared = f"{exc}."
        if compared:
            parts.append(f"Paired, instance by instance:\n\n{compared}")
            table = f"{table}\n\n{compared}"
    elif len(runs) > 1 and any(run.context_control for run in runs):
        # A context control is the intact run perturbed: compare them instance by instance.
        try:
            paired = paired_differences(runs, ())
            compared = paired_table(paired, runs[0].x_axis.scale)
        except NotPairable as exc:
            compared = f"{exc}."
        parts.append(f"Paired with the first run, instance by instance:\n\n{compared}")
        table = f"{table}\n\n{compared}"
    software, software_summary = _software_section(runs)
    if software:
        parts.append(software)
        table = f"{table}\n\n{software}"
    if memory is not None:
        split = split_table(splits, memory, runs[0].x_axis.scale)
        parts.append(f"Split by memory:\n\n{split}")
        table = f"{table}\n\n{split}"
    markdown = "\n\n".join([*parts, *figures]) + "\n"
    report = out_dir / REPORT_FILE
    atomic_write_text(report, markdown)
    summary = _summary(runs, group_by, paired, memory, splits, software_summary)
    json_file = out_dir / REPORT_JSON_FILE
    atomic_write_text(json_file, json.dumps(summary, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return ReportFiles(
        markdown=report,
        plot=plot,
        table=table,
        grouped_plot=grouped_plot,
        every_metric_plot=every_metric,
        json_file=json_file,
        paired=tuple(paired),
        memory=tuple(splits),
    )


def _software_section(runs: Sequence[RunReport]) -> tuple[str, dict[str, Any]]:
    """The versions that differ between the runs and, for runs of one model read the same way that asked
    the same question, whether their log-probs and outputs agree (:mod:`longread.report.software`):
    report.md's paragraph and report.json's ``software``."""
    facts = software_facts(runs)
    if not facts.worth_saying:
        return "", facts.summary()
    parts = []
    if facts.differing:
        parts.append(f"{DIFFERING_SOFTWARE}\n\n{versions_table(runs, facts.differing)}")
    else:
        parts.append(SAME_SOFTWARE)
    if facts.lines:
        parts.append(AGREEMENT_HEADING + "\n\n" + "\n".join(f"- {line}" for line in facts.lines))
    return "\n\n".join(parts), facts.summary()


def _summary(
    runs: Sequence[RunReport],
    group_by: Sequence[str],
    paired: Sequence[PairedDifference],
    memory: MemoryVerdicts | None,
    splits: Sequence[MemorySplit],
    software: dict[str, Any],
) -> dict[str, Any]:
    """What ``report.json`` holds: the runs, ``--group-by``, the paired differences, the memory split."""
    return {
        "runs": [{"label": run.label, "path": str(run.path), "task": run.task} for run in runs],
        "group_by": list(group_by),
        "paired": [difference.as_dict() for difference in paired],
        "software": software,
        "memory": None
        if memory is None
        else {
            "probes": str(memory.path.parent),
            "model": memory.model_name,
            "rule": memory.rule,
            "remembered": sorted(memory.remembered()),
            "cannot_tell": sorted(memory.cannot_tell()),
            "splits": [split.as_dict() for split in splits],
        },
    }


def grouped_plot_name(fields: Sequence[str]) -> str:
    """``memory_curve_by_question_type.png`` for ``--group-by question_type``."""
    return f"memory_curve_by_{'_'.join(fields)}.png"
