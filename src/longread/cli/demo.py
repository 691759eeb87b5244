"""``longread demo`` and ``longread demo-narrativexl``: the bundled books built, evaluated and reported."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from longread.cli.options import fail, parse_lengths
from longread.errors import LongreadError

demo_app = typer.Typer()

DemoOutOption = Annotated[Path, typer.Option("--out", help="Folder for the demo's files.")]


@demo_app.command("demo")
def demo_command(
    out: DemoOutOption = Path("demo-out"),
    model: Annotated[
        list[str] | None, typer.Option(help="Model spec to evaluate (repeat; default: smollm2 and suffixlm).")
    ] = None,
    prefix_lengths: Annotated[
        str, typer.Option(help="Prefix lengths, comma-separated.")
    ] = "256,512,1024,2048",
    sample: Annotated[
        int, typer.Option(help="Instances to evaluate (a seeded sample, stratified by book).")
    ] = 10,
) -> None:
    """Build ChapterBreak from the books bundled with longread, evaluate models, print the table, plot it."""
    from longread.demos.chapterbreak import DEMO_MODELS, run_demo

    try:
        run_demo(
            out, models=model or DEMO_MODELS, prefix_lengths=parse_lengths(prefix_lengths), sample=sample
        )
    except LongreadError as exc:
        raise fail(exc) from None


@demo_app.command("demo-narrativexl")
def demo_narrativexl_command(
    out: DemoOutOption = Path("demo-out/narrativexl"),
    model: Annotated[str, typer.Option(help="Model that summarises and answers.")] = "smollm2",
    scenes: Annotated[int, typer.Option(help="Scenes of Pride and Prejudice read.")] = 12,
    decoy_scenes: Annotated[
        int, typer.Option(help="Scenes of each other bundled book summarised for other-book decoys.")
    ] = 2,
) -> None:
    """Build NarrativeXL from a bundled novel with SmolLM2, evaluate it read-along and options-only, and draw
    the forgetting curve per question type."""
    from longread.demos.narrativexl import run_narrativexl_demo

    try:
        run_narrativexl_demo(out, model=model, scenes=scenes, decoy_scenes=decoy_scenes)
    except LongreadError as exc:
        raise fail(exc) from None


@demo_app.command("demo-context")
def demo_context_command(
    out: DemoOutOption = Path("demo-out/context"),
    model: Annotated[str, typer.Option(help="The model to ask (a spec, see `longread models`).")] = "smollm2",
    sample: Annotated[int, typer.Option(help="ChapterBreak instances (seeded, stratified by book).")] = 20,
) -> None:
    """Does the model use what it read? NarrativeXL summaries with the scene intact, shuffled or replaced,
    and ChapterBreak at 1K with the prefix beyond its last 256 tokens replaced: the context-use tables."""
    from longread.demos.context_use import run_context_demo

    try:
        run_context_demo(out, model=model, sample=sample)
    except LongreadError as exc:
        raise fail(exc) from None
