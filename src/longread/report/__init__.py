"""Reports of finished runs: a markdown table and an accuracy-vs-prefix-length plot."""

from longread.report.build import ReportFiles, build_report
from longread.report.load import PrefixLengthResult, ReportInputError, RunReport, load_run, load_runs
from longread.report.plot import plot_accuracy_vs_prefix
from longread.report.table import format_caption, format_table

__all__ = [
    "PrefixLengthResult",
    "ReportFiles",
    "ReportInputError",
    "RunReport",
    "build_report",
    "format_caption",
    "format_table",
    "load_run",
    "load_runs",
    "plot_accuracy_vs_prefix",
]
