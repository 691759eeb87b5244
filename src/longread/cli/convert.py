"""``longread convert …``: between longread's files and the official layouts (ChapterBreak, PAN)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from longread.cli.options import fail
from longread.errors import LongreadError

convert_app = typer.Typer(
    help="Convert between longread files and the official layouts.", no_args_is_help=True
)


@convert_app.command("chapterbreak")
def convert_chapterbreak_command(
    file: Annotated[Path, typer.Argument(help="Input file (longread JSONL or the official JSON layout).")],
    out: Annotated[
        Path, typer.Option("--out", help="Output file (a folder with --to official --prefix-lengths).")
    ],
    to: Annotated[
        str, typer.Option(help="official ({'pg19': {work: [{ctx,pos,negs}]}, 'ao3': …}) or longread.")
    ],
    tokenizer: Annotated[
        str, typer.Option(help="Tokenizer that recounts tokens when importing and cuts prefixes.")
    ] = "gpt2",
    prefix_lengths: Annotated[
        str | None,
        typer.Option(
            help="With --to official: one file per prefix length in the --out folder, "
            "chapterbreak_ctx_{N}.json with ctx cut from the left to N tokens (e.g. 256,512,1024)."
        ),
    ] = None,
) -> None:
    """Convert a ChapterBreak set between longread's JSONL and the official layout (both ways)."""
    from longread.benchmarks.chapterbreak.io import iter_instances, write_instances
    from longread.benchmarks.chapterbreak.official import (
        parse_prefix_lengths,
        read_official,
        write_official,
        write_official_by_length,
    )

    try:
        if to == "official" and prefix_lengths is not None:
            try:
                lengths = parse_prefix_lengths(prefix_lengths)
            except ValueError as exc:
                raise typer.BadParameter(str(exc), param_hint="--prefix-lengths") from None
            for path in write_official_by_length(iter_instances(file), out, lengths, tokenizer=tokenizer):
                typer.echo(f"wrote {path}")
        elif to == "official":
            write_official(iter_instances(file), out)
        elif to == "longread":
            count = write_instances(read_official(file, tokenizer=tokenizer), out)
            typer.echo(f"wrote {count} instances to {out}")
        else:
            raise typer.BadParameter("use official or longread", param_hint="--to")
    except LongreadError as exc:
        raise fail(exc) from None


@convert_app.command("muld-to-pan")
def muld_to_pan_command(
    data: Annotated[Path, typer.Argument(help="A MuLD style-change file.")],
    folder: Annotated[
        Path, typer.Argument(help="The PAN folder to write (problem-N.txt, truth-problem-N.json).")
    ],
) -> None:
    """Write a MuLD style-change file in the PAN layout (bad records named and skipped)."""
    from longread.benchmarks.muld.pan import export_pan

    try:
        problems = export_pan(data, folder)
    except LongreadError as exc:
        raise fail(exc) from None
    _echo_skipped(problems)
    typer.echo(f"wrote {folder}")


@convert_app.command("pan-to-muld")
def pan_to_muld_command(
    folder: Annotated[Path, typer.Argument(help="A PAN style-change folder.")],
    out: Annotated[Path, typer.Argument(help="The MuLD file to write (.jsonl or .jsonl.bz2).")],
) -> None:
    """Read a PAN folder into a MuLD style-change file (a truth that does not fit is named)."""
    from longread.benchmarks.muld.pan import import_pan

    try:
        read = import_pan(folder, out)
    except LongreadError as exc:
        raise fail(exc) from None
    _echo_skipped(read.problems)
    typer.echo(f"wrote {out}")


def _echo_skipped(problems: Sequence[Exception]) -> None:
    """``skipped: …`` for each record left out (each names its file and what is wrong)."""
    for problem in problems:
        typer.echo(f"skipped: {problem}")
