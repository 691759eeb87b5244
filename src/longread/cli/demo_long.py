"""``longread demo-long``: the whole window on ChapterBreak (Gemma 3 270M, 1K to 32K prefix tokens)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from longread.cli.options import ThreadsOption, fail, parse_lengths
from longread.errors import LongreadError

demo_long_app = typer.Typer()


@demo_long_app.command("demo-long")
def demo_long_command(
    out: Annotated[Path, typer.Option("--out", help="Folder for the demo's files.")] = Path("demo-out/long"),
    model: Annotated[str, typer.Option(help="Model spec (a local model reads the whole window).")] = "gemma3",
    prefix_lengths: Annotated[
        str, typer.Option(help="Prefix lengths, comma-separated (lowered to what the window holds).")
    ] = "1024,2048,4096,8192,16384,32768",
    sample: Annotated[int, typer.Option(help="Instances scored at every length (a seeded sample).")] = 2,
    threads: ThreadsOption = None,
) -> None:
    """ChapterBreak from a bundled novel, scored at prefixes of 1K to 32K tokens; the memory curve drawn."""
    from longread.demos.long_window import run_long_window_demo

    try:
        run_long_window_demo(
            out, model=model, lengths=parse_lengths(prefix_lengths), sample=sample, threads=threads
        )
    except LongreadError as exc:
        raise fail(exc) from None
