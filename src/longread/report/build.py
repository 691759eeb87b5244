"""``longread report RUN_DIR… --out DIR``: a markdown table and a plot of one or more runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from longread.files import atomic_write_text
from longread.report.grouped import grouped_table
from longread.report.load import load_runs
from longread.report.plot import plot_memory_curve
from longread.report.table import format_caption, format_table

REPORT_FILE = "report.md"
PLOT_FILE = "memory_curve.png"


@dataclass(frozen=True)
class ReportFiles:
    markdown: Path
    plot: Path
    table: str


def build_report(run_dirs: Sequence[Path], out_dir: Path, group_by: Sequence[str] = ()) -> ReportFiles:
    """Write ``report.md`` (caption, table, plot) and ``memory_curve.png`` into ``out_dir``.

    ``group_by`` (row fields, e.g. ``suffix_type``) adds a table of the primary metric
    per group × x value, the paper's side-by-side comparison.
    """
    if not run_dirs:
        raise ValueError("build_report needs at least one run directory")
    runs = load_runs([Path(path) for path in run_dirs])
    out_dir.mkdir(parents=True, exist_ok=True)
    plot = plot_memory_curve(runs, out_dir / PLOT_FILE)
    table = format_table(runs)
    parts = [format_caption(runs), table]
    if group_by:
        grouped = grouped_table(runs, group_by)
        parts.append(f"By {', '.join(group_by)}:\n\n{grouped}")
        table = f"{table}\n\n{grouped}"
    markdown = "\n\n".join([*parts, f"![memory curve]({PLOT_FILE})"]) + "\n"
    report = out_dir / REPORT_FILE
    atomic_write_text(report, markdown)
    return ReportFiles(markdown=report, plot=plot, table=table)
