"""``make demo``: build a ChapterBreak set from the books bundled with longread and show it."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import typer

from longread.benchmarks.chapterbreak.build import BuildOptions
from longread.benchmarks.chapterbreak.io import iter_instances
from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak
from longread.benchmarks.chapterbreak.stats import compute_stats, format_stats


def bundled_books() -> list[Path]:
    """The public-domain novels shipped inside the package (Project Gutenberg files as published)."""
    folder = Path(str(resources.files("longread") / "data" / "books"))
    return sorted(folder.glob("*.txt.gz"))


def run_demo(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    data = out / "chapterbreak.jsonl"
    books = bundled_books()
    typer.echo(f"building ChapterBreak from {len(books)} bundled books → {data}")
    report = build_chapterbreak(list(books), data, BuildOptions(seed=0), workers=2)
    for line in report.summary_lines():
        typer.echo(line)
    typer.echo("")
    typer.echo(format_stats(compute_stats(iter_instances(data))))
