"""``make demo-context``: does SmolLM2 use what it read? Two ablations on the bundled books, each paired
instance by instance with its intact run, printed as context-use tables and drawn:

1. NarrativeXL summaries (pick a scene's true summary among distorted ones): the scene intact, shuffled
   and replaced by another book's text, everything perturbed (K = 0). SmolLM2 writes the summaries,
   whichever model is asked (twelve scenes of Pride and Prejudice; four other bundled books lend one
   scene each, so that ``replace`` has other books to take tokens from). Compared on accuracy and on the
   margin (the true summary's log-prob per token over the best distorted one's): the scene is what makes
   the true summary likely, and the margin shows it before a handful of scenes can flip an answer.
2. ChapterBreak at a 1,024-token prefix: intact, and the prefix beyond its last 256 tokens replaced by
   another book's tokens — does the distant part of the prefix matter?
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from longread.benchmarks.chapterbreak.build import BuildOptions
from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak
from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.benchmarks.narrativexl.build import NarrativeXLBuildSettings, build_narrativexl
from longread.benchmarks.narrativexl.summaries import SummarySettings
from longread.benchmarks.narrativexl.summaries_task import SummariesTask
from longread.documents.bundled import bundled_books
from longread.evaluation.controls import ControlSettings
from longread.evaluation.runner import RunOptions
from longread.models.registry import load_backend
from longread.models.requests.control import ControlKind
from longread.report.ablation import AblationFiles, run_ablation

DEMO_PREFIX = 1024
DEMO_KEEP = 256
DEMO_SAMPLE = 20
"""ChapterBreak instances (the summaries part asks every scene that has distorted summaries)."""
SUMMARY_BOOK = "pg1342"
"""Pride and Prejudice: the book whose scenes are summarised and asked."""
SUMMARY_SCENES = 12
WRITER = "smollm2"
"""Who writes the summaries, whichever model is asked."""
SUMMARY_TOKENS = 64
SUMMARY_METRICS = ("accuracy", "margin")
SUMMARY_CONTROLS: tuple[ControlKind, ...] = ("shuffle", "replace")
CHAPTERBREAK_CONTROLS: tuple[ControlKind, ...] = ("replace",)


def run_context_demo(out: Path, *, model: str = "smollm2", sample: int = DEMO_SAMPLE) -> None:
    out.mkdir(parents=True, exist_ok=True)
    backend = load_backend(model)
    # The summaries are always SmolLM2's (the bundled model), so that two models are compared on one data.
    writer = backend if model == WRITER else load_backend(WRITER)
    books = bundled_books()
    summaries = out / "narrativexl-data"
    main = [book for book in books if book.name.startswith(SUMMARY_BOOK + ".")]
    typer.echo(
        f"1. NarrativeXL summaries: {WRITER} summarises the first {SUMMARY_SCENES} scenes of {main[0].name} "
        f"and one scene of each of {len(books) - 1} other bundled books → {summaries} "
        "(rerunning reuses every generation)"
    )
    build = build_narrativexl(
        main,
        summaries,
        writer,
        NarrativeXLBuildSettings(
            seed=0,
            max_scenes=SUMMARY_SCENES,
            summaries=SummarySettings(
                summary_max_tokens=SUMMARY_TOKENS, distortion_max_tokens=SUMMARY_TOKENS
            ),
        ),
        decoy_sources=[book for book in books if book not in main],
        decoy_max_scenes=1,
        log=lambda line: typer.echo("   " + line),
    )
    for line in build.summary_lines():
        typer.echo("   " + line)
    typer.echo(
        f"   {model} on every askable scene: intact, then the whole scene (K = 0) "
        f"{' / '.join(SUMMARY_CONTROLS)} → {out / 'summaries'}"
    )
    first = _ablation(SummariesTask, summaries, backend, out / "summaries", SUMMARY_CONTROLS, 0, None,
                      metrics=SUMMARY_METRICS)  # fmt: skip

    data = out / "chapterbreak.jsonl"
    typer.echo(f"2. ChapterBreak from {len(books)} bundled books → {data}")
    report = build_chapterbreak(list(books), data, BuildOptions(seed=0, prefix_tokens=DEMO_PREFIX), workers=2)
    for line in report.summary_lines():
        typer.echo("   " + line)
    typer.echo(
        f"   {model} on {sample} instances at a {DEMO_PREFIX}-token prefix: intact, then the prefix beyond "
        f"its last {DEMO_KEEP} tokens replaced by another book's tokens → {out / 'chapterbreak'}"
    )
    settings = ChapterBreakSettings(prefix_lengths=(DEMO_PREFIX,))
    second = _ablation(
        lambda: ChapterBreakTask(settings),
        data,
        backend,
        out / "chapterbreak",
        CHAPTERBREAK_CONTROLS,
        DEMO_KEEP,
        sample,
    )
    for title, files in (("NarrativeXL summaries", first), ("ChapterBreak", second)):
        typer.echo(f"\n## {title}\n")
        typer.echo(files.markdown.read_text(encoding="utf-8"))
        typer.echo(f"report: {files.markdown}\nplot:   {files.plot}\nhtml:   {files.html}")
        if files.failed:
            typer.echo(f"{files.failed} samples failed: each run's errors.jsonl names them")


def _ablation(
    make: Callable[[], Any],
    data: Path,
    backend: Any,
    out: Path,
    kinds: tuple[ControlKind, ...],
    keep_last: int,
    sample: int | None,
    *,
    metrics: tuple[str, ...] = (),
) -> AblationFiles:
    def announce(index: int, total: int, name: str, path: Path) -> None:
        typer.echo(f"   [{index}/{total}] {name} → {path} (rerunning resumes)")

    plans = [ControlSettings(kind, keep_last, 0) for kind in kinds]
    return run_ablation(
        make,
        data,
        backend,
        out,
        plans,
        RunOptions(sample=sample, resume=True),
        on_run=announce,
        metrics=metrics,
    )
