"""``longread read``: one book as longread reads it (metadata, chapters, notes)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from longread.cli.options import FormatOption, fail
from longread.errors import LongreadError

read_app = typer.Typer()


@read_app.command("read")
def read_command(
    path: Annotated[Path, typer.Argument(help="A book file.")],
    format: FormatOption = "auto",
    heading_pattern: Annotated[
        str | None, typer.Option(help="plain text: regex of chapter heading lines.")
    ] = None,
) -> None:
    """Read one book and list what was found: metadata, chapters (heading, words, opening), and notes."""
    from longread.documents.reader import read_book

    try:
        book = read_book(path, format=format, heading_pattern=heading_pattern)  # type: ignore[arg-type]
    except LongreadError as exc:
        raise fail(exc) from None
    typer.echo(f"{book.id}: {book.title} — {book.author} [{book.language}] ({len(book.chapters)} chapters)")
    for index, chapter in enumerate(book.chapters):
        parts = f"  [{' / '.join(chapter.parts)}]" if chapter.parts else ""
        opening = " ".join(chapter.text.split()[:8])
        words = len(chapter.text.split())
        typer.echo(f"  {index:3d}  {chapter.heading[:50]:<50}  {words:7,d} words  {opening}{parts}")
    for note in book.notes:
        typer.echo(f"  note: {note}")
