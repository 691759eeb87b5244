"""``longread report``: the table and memory curve of one or more stored runs (and an HTML page)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from longread.cli.options import fail
from longread.errors import LongreadError

if TYPE_CHECKING:
    from longread.report.build import ReportFiles

report_app = typer.Typer()


@report_app.command("report")
def report_command(
    runs: Annotated[
        list[Path], typer.Argument(help="Run directories (several runs share one table and plot).")
    ],
    out: Annotated[Path, typer.Option("--out", help="Folder for report.md and the PNG plot.")] = Path(
        "report"
    ),
    group_by: Annotated[
        str | None,
        typer.Option(
            help="Row fields to compare side by side, comma-separated (e.g. suffix_type,negatives_from)."
        ),
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Folder for one self-contained HTML page (index.html): tables, curves, "
            "configs side by side, a per-sample browser.",
        ),
    ] = None,
    memory: Annotated[
        Path | None,
        typer.Option(
            "--memory",
            help="A `longread probe memory` folder of the runs' model: each score split by whether the "
            "model remembers the book (ChapterBreak, NarrativeXL).",
        ),
    ] = None,
) -> None:
    """A markdown table and a memory-curve plot (primary metric against the x-axis) of one or more runs."""
    from longread.probes.memory.verdicts import load_verdicts
    from longread.report.build import build_report

    fields = [part.strip() for part in (group_by or "").split(",") if part.strip()]
    try:
        verdicts = load_verdicts(memory) if memory is not None else None
        files = build_report(list(runs), out, group_by=fields, memory=verdicts)
    except LongreadError as exc:
        raise fail(exc) from None
    typer.echo(files.table)
    typer.echo(f"report: {files.markdown}")
    echo_plots(files)
    if html is not None:
        from longread.report.html import build_html_report

        try:
            page = build_html_report(list(runs), html, memory=verdicts)
        except LongreadError as exc:
            raise fail(exc) from None
        typer.echo(f"html: {page}")


def echo_plots(files: ReportFiles) -> None:
    """``plot: PATH`` for each plot the report drew."""
    for plot in (files.plot, files.grouped_plot, files.every_metric_plot):
        if plot is not None:
            typer.echo(f"plot: {plot}")
