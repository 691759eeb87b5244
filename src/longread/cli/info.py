"""``longread stats``, ``models``, ``tasks`` and ``books``: what a built set holds, which
models and tasks longread knows."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from longread.cli.options import fail
from longread.errors import LongreadError

info_app = typer.Typer()


@info_app.command("stats")
def stats_command(
    file: Annotated[Path, typer.Argument(help="A longread ChapterBreak JSONL file.")],
) -> None:
    """Statistics of a ChapterBreak set (works, examples per suffix type, chapters and words per work)."""
    from longread.benchmarks.chapterbreak.io import iter_instances
    from longread.benchmarks.chapterbreak.stats import compute_stats, format_stats

    try:
        typer.echo(format_stats(compute_stats(iter_instances(file))))
    except LongreadError as exc:
        raise fail(exc) from None


@info_app.command("models")
def models_command(
    folder: Annotated[
        str | None,
        typer.Option(
            "--folder",
            help="Print the Hugging Face folder a local model spec (smollm2, gemma3, gguf:FILE …) loads "
            "from, building its cache once — the folder a server such as vLLM serves.",
        ),
    ] = None,
) -> None:
    """List the model specs `--model` accepts (or, with --folder SPEC, where a local model's files are)."""
    from longread.models.registry import known_specs, load_backend

    if folder is None:
        for kind, text in sorted(known_specs().items()):
            typer.echo(f"{kind}: {text}")
        return
    try:
        backend = load_backend(folder)
    except LongreadError as exc:
        raise fail(exc) from None
    loaded = getattr(backend, "loaded", None)
    weights = Path(str(getattr(loaded, "weights", "")))
    if not weights.is_dir():
        raise fail(LongreadError(f"model {folder!r} is not loaded from a local folder (it is {weights})"))
    typer.echo(str(weights))


@info_app.command("tasks")
def tasks_command() -> None:
    """List the registered tasks: what each measures, what a model must answer, its x-axis and settings."""
    from longread.evaluation.registry import describe_tasks

    for info in describe_tasks():
        typer.echo(f"{info.name}: {info.description}")
        typer.echo(f"  model must answer: {' or '.join(info.request_kinds)}")
        typer.echo(f"  x-axis: {info.x_axis}")
        for key, value in info.settings.items():
            shown = ",".join(map(str, value)) if isinstance(value, list | tuple) else value
            typer.echo(f"  -o {key}={shown}")


@info_app.command("books")
def books_command(
    paths: Annotated[bool, typer.Option("--paths", help="Print only the files' paths, one a line.")] = False,
) -> None:
    """The public-domain novels shipped with longread: their `bundled:` names (which every command that
    takes books takes), titles, chapters and words, and where the files are."""
    from longread.documents.bundled import PREFIX, bundled_books
    from longread.documents.reader import read_book

    for path in bundled_books():
        if paths:
            typer.echo(str(path))
            continue
        book = read_book(path)
        name = f"{PREFIX}{path.name.removesuffix('.txt.gz')}"
        typer.echo(
            f"{name:<16} {book.title} ({book.author}): {len(book.chapters)} chapters, "
            f"{book.word_count:,} words — {path}"
        )
    if not paths:
        typer.echo(f"`{PREFIX}` names them all; e.g. longread build chapterbreak {PREFIX} --out cb.jsonl")
