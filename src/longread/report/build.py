"""``longread report RUN_DIR… --out DIR``: a markdown table and a plot of one or more runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from longread.files import atomic_write_text
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


def build_report(run_dirs: Sequence[Path], out_dir: Path) -> ReportFiles:
    """Write ``report.md`` (caption, table, plot) and ``accuracy_vs_prefix.png`` into ``out_dir``."""
    if not run_dirs:
        raise ValueError("build_report needs at least one run directory")
    runs = load_runs([Path(path) for path in run_dirs])
    out_dir.mkdir(parents=True, exist_ok=True)
    plot = plot_memory_curve(runs, out_dir / PLOT_FILE)
    table = format_table(runs)
    markdown = "\n\n".join([format_caption(runs), table, f"![memory curve]({PLOT_FILE})"]) + "\n"
    report = out_dir / REPORT_FILE
    atomic_write_text(report, markdown)
    return ReportFiles(markdown=report, plot=plot, table=table)
