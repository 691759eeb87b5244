"""``make demo-context``: does SmolLM2 use what it read? ChapterBreak from the bundled books at a 1,024-token
prefix, intact and with the prefix beyond its last 256 tokens replaced by another book's tokens,
shuffled, or dropped — paired instance by instance, printed as the context-use table and drawn."""

from __future__ import annotations

from pathlib import Path

import typer

from longread.benchmarks.chapterbreak.build import BuildOptions
from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak
from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.demos.chapterbreak import bundled_books
from longread.evaluation.controls import ControlSettings
from longread.evaluation.runner import RunOptions
from longread.models.registry import load_backend
from longread.report.ablation import run_ablation

DEMO_PREFIX = 1024
DEMO_KEEP = 256
DEMO_CONTROLS = ("replace", "shuffle", "none")
DEMO_SAMPLE = 24


def run_context_demo(out: Path, *, model: str = "smollm2", sample: int = DEMO_SAMPLE) -> None:
    out.mkdir(parents=True, exist_ok=True)
    data = out / "chapterbreak.jsonl"
    books = bundled_books()
    typer.echo(f"1. building ChapterBreak from {len(books)} bundled books → {data}")
    report = build_chapterbreak(list(books), data, BuildOptions(seed=0, prefix_tokens=DEMO_PREFIX), workers=2)
    for line in report.summary_lines():
        typer.echo("   " + line)
    plans = [ControlSettings(kind, DEMO_KEEP, 0) for kind in DEMO_CONTROLS]  # type: ignore[arg-type]
    typer.echo(
        f"2. {model} on {sample} instances at a {DEMO_PREFIX}-token prefix: intact, then the prefix "
        f"beyond its last {DEMO_KEEP} tokens {', '.join(DEMO_CONTROLS)} (replace: from another book) → {out}"
    )
    settings = ChapterBreakSettings(prefix_lengths=(DEMO_PREFIX,))

    def announce(index: int, total: int, name: str, path: Path) -> None:
        typer.echo(f"   [{index}/{total}] {name} → {path} (rerunning resumes)")

    files = run_ablation(
        lambda: ChapterBreakTask(settings),
        data,
        load_backend(model),
        out,
        plans,
        RunOptions(sample=sample, resume=True),
        on_run=announce,
    )
    typer.echo("")
    typer.echo(files.markdown.read_text(encoding="utf-8"))
    typer.echo(f"report: {files.markdown}\nplot:   {files.plot}\nhtml:   {files.html}")
