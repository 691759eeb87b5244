"""``make demo-narrativexl``: NarrativeXL built from one bundled book with SmolLM2, evaluated, drawn.

The book read is Pride and Prejudice (its first ``scenes`` scenes); four other
bundled novels lend a few summarised scenes each to the other-book decoys, as
the authors' questions need other books. SmolLM2 writes every summary; the
evaluation reads the book once with SmolLM2 and answers each question at its
reading position, then the options-only baseline answers the same questions
without the book. The report draws accuracy against retention demand per
question type, with chance and the baseline.
"""

from __future__ import annotations

from pathlib import Path

import typer

from longread.benchmarks.narrativexl.build import NarrativeXLBuildSettings, build_narrativexl
from longread.benchmarks.narrativexl.summaries import SummarySettings
from longread.benchmarks.narrativexl.task import NarrativeXLSettings, NarrativeXLTask
from longread.documents.bundled import bundled_books
from longread.evaluation.runner import RunOptions, run_task
from longread.models.registry import load_backend
from longread.report.build import build_report

DEMO_BOOK = "pg1342"
"""Pride and Prejudice."""
DEMO_SCENES = 12
DECOY_SCENES = 2
DEMO_SUMMARY_TOKENS = 96
"""Summaries and distortions of at most 96 tokens (the build's default is 192): a shorter demo.
16 scenes, 3 per decoy book and 128 tokens took 39 CPU-minutes (36 min wall on a loaded machine)."""


def run_narrativexl_demo(
    out: Path, *, model: str = "smollm2", scenes: int = DEMO_SCENES, decoy_scenes: int = DECOY_SCENES
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    books = bundled_books()
    main = [book for book in books if book.name.startswith(DEMO_BOOK + ".")]
    decoys = [book for book in books if book not in main]
    data = out / "data"
    backend = load_backend(model)
    typer.echo(
        f"1. building NarrativeXL from {main[0].name} (first {scenes} scenes) with {model}; "
        f"{len(decoys)} other bundled books lend {decoy_scenes} scenes each to other-book decoys → {data} "
        "(rerunning reuses every generation)"
    )
    report = build_narrativexl(
        main,
        data,
        backend,
        NarrativeXLBuildSettings(
            seed=0,
            max_scenes=scenes,
            summaries=SummarySettings(
                summary_max_tokens=DEMO_SUMMARY_TOKENS, distortion_max_tokens=DEMO_SUMMARY_TOKENS
            ),
        ),
        decoy_sources=decoys,
        decoy_max_scenes=decoy_scenes,
        log=lambda line: typer.echo("   " + line),
    )
    for line in report.summary_lines():
        typer.echo("   " + line)
    runs = []
    for step, options_only in ((2, False), (3, True)):
        run = out / ("run-options-only" if options_only else f"run-{model}")
        what = "the options alone (no book)" if options_only else "the book, read once, questions on the way"
        typer.echo(f"{step}. evaluating {model} on {what} → {run} (rerunning resumes)")
        task = NarrativeXLTask(NarrativeXLSettings(options_only=options_only))
        outcome = run_task(task, data, backend, run, RunOptions(resume=True))
        typer.echo(
            f"   {outcome.scored} questions scored now, {outcome.skipped_done} done before, "
            f"{len(outcome.errors)} failed"
        )
        runs.append(run)
    files = build_report(runs, out / "report", group_by=("question_type",))
    typer.echo("")
    typer.echo(files.table)
    typer.echo("")
    typer.echo("chance is 1 in 6 (16.7%): five decoys and 'None of the above.'")
    typer.echo(f"report: {files.markdown}")
    typer.echo(f"plot:   {files.plot}")
    if files.grouped_plot is not None:
        typer.echo(f"plot:   {files.grouped_plot} (forgetting curve per question type)")
