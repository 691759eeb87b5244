"""``make demo``: build ChapterBreak from the bundled books, evaluate SmolLM2 and SuffixLM, show both."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import typer

from longread.benchmarks.chapterbreak.build import BuildOptions
from longread.benchmarks.chapterbreak.io import iter_instances
from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak
from longread.benchmarks.chapterbreak.stats import compute_stats, format_stats
from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.documents.bundled import bundled_books
from longread.evaluation.runner import RunOptions, run_task
from longread.models.registry import load_backend
from longread.report.build import build_report
from longread.report.html import build_html_report

DEMO_MODELS = ("smollm2", "suffixlm")
DEMO_PREFIX_LENGTHS = (256, 512, 1024, 2048)
DEMO_SAMPLE = 10


def run_demo(
    out: Path,
    *,
    models: Sequence[str] = DEMO_MODELS,
    prefix_lengths: tuple[int, ...] = DEMO_PREFIX_LENGTHS,
    sample: int = DEMO_SAMPLE,
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    data = out / "chapterbreak.jsonl"
    books = bundled_books()
    typer.echo(f"1. building ChapterBreak from {len(books)} bundled books → {data}")
    report = build_chapterbreak(list(books), data, BuildOptions(seed=0), workers=2)
    for line in report.summary_lines():
        typer.echo("   " + line)
    typer.echo("")
    typer.echo(format_stats(compute_stats(iter_instances(data))))
    typer.echo("")
    task = ChapterBreakTask(ChapterBreakSettings(prefix_lengths=prefix_lengths))
    runs = []
    for step, model in enumerate(models, start=2):
        run = out / f"run-{model.replace(':', '-').replace('/', '_')}"
        typer.echo(
            f"{step}. evaluating {model} on {sample} instances (seeded sample, stratified by book) at prefix "
            f"lengths {', '.join(map(str, prefix_lengths))} → {run} (rerunning resumes)"
        )
        outcome = run_task(task, data, load_backend(model), run, RunOptions(sample=sample, resume=True))
        done_before = outcome.skipped_done
        typer.echo(
            f"   {outcome.scored} samples scored now, {outcome.reused} reused, {done_before} done before"
        )
        runs.append(run)
    files = build_report(runs, out / "report")
    typer.echo("")
    typer.echo(files.table)
    typer.echo("")
    typer.echo("chance is 1 in 6 (16.7%)")
    typer.echo(f"report: {files.markdown}")
    typer.echo(f"plot:   {files.plot}")
    typer.echo(f"html:   {build_html_report(runs, out / 'report')}")
