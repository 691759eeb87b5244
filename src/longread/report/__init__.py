"""Reports of finished runs: a markdown table and a memory curve (primary metric against the x-axis)."""

from longread.report.build import ReportFiles, build_report
from longread.report.load import MetricValue, ReportInputError, RunReport, XPoint, load_run, load_runs
from longread.report.plot import plot_memory_curve
from longread.report.table import format_caption, format_table

__all__ = [
    "MetricValue",
    "ReportFiles",
    "ReportInputError",
    "RunReport",
    "XPoint",
    "build_report",
    "format_caption",
    "format_table",
    "load_run",
    "load_runs",
    "plot_memory_curve",
]
