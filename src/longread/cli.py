"""The ``longread`` command: one subcommand per job. Thin: it parses options and calls the library."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from longread.errors import LongreadError

app = typer.Typer(
    help="longread: does a language model really use what it read thousands of tokens ago?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
build_app = typer.Typer(help="Build a benchmark from raw books.", no_args_is_help=True)
convert_app = typer.Typer(
    help="Convert between longread files and the official layouts.", no_args_is_help=True
)
app.add_typer(build_app, name="build")
app.add_typer(convert_app, name="convert")

FORMAT_HELP = (
    "Input format: auto (from the file: .txt with Gutenberg markers → gutenberg, PG-19 split folders → pg19, "
    ".html → ao3-html, .epub → epub, .jsonl → jsonl, other text → plain), or one of "
    "gutenberg, pg19, plain, ao3-html, epub, jsonl."
)


def _fail(exc: LongreadError) -> typer.Exit:
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(code=2)


@build_app.command("chapterbreak")
def build_chapterbreak_command(
    books: Annotated[
        list[Path], typer.Option("--books", help="Books: files, folders or tar/zip archives (repeat).")
    ],
    out: Annotated[Path, typer.Option("--out", help="Output JSONL file (written atomically).")],
    seed: Annotated[
        int, typer.Option(help="Seed for sampling negatives (same seed → byte-identical file).")
    ] = 0,
    prefix_tokens: Annotated[
        int, typer.Option(help="Prefix budget in tokens: the prefix is cut from the left to this length.")
    ] = 8192,
    prefix_margin: Annotated[
        float,
        typer.Option(
            help="Keep this fraction more prefix than the budget, for models whose tokenizer is less dense."
        ),
    ] = 0.25,
    suffix_tokens: Annotated[
        int, typer.Option(help="Suffix budget: every candidate is cut from the right.")
    ] = 128,
    negatives: Annotated[
        int, typer.Option(help="Negatives per instance (later boundaries of the same book).")
    ] = 5,
    tokenizer: Annotated[str, typer.Option(help="Tokenizer for the budgets: gpt2 or hf:FOLDER.")] = "gpt2",
    suffix_type: Annotated[
        str,
        typer.Option(
            help="chapter (next chapter start), cause (because/due to/owing to) or dialogue (a quote)."
        ),
    ] = "chapter",
    negatives_from: Annotated[
        str, typer.Option(help="in-book (later boundaries) or out-of-book (other books).")
    ] = ("in-book"),
    min_prefix_tokens: Annotated[
        int, typer.Option(help="Skip boundaries with a shorter prefix than this.")
    ] = 1,
    max_per_book: Annotated[
        int | None,
        typer.Option(help="cause/dialogue: at most this many boundaries per book (seeded sample)."),
    ] = None,
    workers: Annotated[
        int, typer.Option(help="Worker processes (books are read and built in parallel).")
    ] = 2,
    format: Annotated[str, typer.Option("--format", help=FORMAT_HELP)] = "auto",
    heading_pattern: Annotated[
        str | None, typer.Option(help="plain text: a regex matching chapter heading lines.")
    ] = None,
    encoding: Annotated[
        str | None, typer.Option(help="Text encoding of the books when not UTF-8 (latin-1, cp1252 …).")
    ] = None,
    strict: Annotated[bool, typer.Option(help="Fail (and write nothing) if any book is skipped.")] = False,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
) -> None:
    """Build ChapterBreak instances: a long prefix ending at a chapter break, the true next chapter start and
    negatives from later chapters, all carrying the gold's chapter number."""
    from longread.benchmarks.chapterbreak.build import BuildOptions
    from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak
    from longread.documents.reader import FORMATS, ReadOptions

    if suffix_type not in ("chapter", "cause", "dialogue"):
        raise typer.BadParameter("use chapter, cause or dialogue", param_hint="--suffix-type")
    if negatives_from not in ("in-book", "out-of-book"):
        raise typer.BadParameter("use in-book or out-of-book", param_hint="--negatives-from")
    if format not in FORMATS:
        raise typer.BadParameter(f"use one of {', '.join(FORMATS)}", param_hint="--format")
    options = BuildOptions(
        seed=seed,
        prefix_tokens=prefix_tokens,
        prefix_margin=prefix_margin,
        suffix_tokens=suffix_tokens,
        negatives=negatives,
        tokenizer=tokenizer,
        suffix_type=suffix_type,  # type: ignore[arg-type]
        negatives_from=negatives_from,  # type: ignore[arg-type]
        min_prefix_tokens=min_prefix_tokens,
        max_per_book=max_per_book,
    )
    try:
        report = build_chapterbreak(
            list(books),
            out,
            options,
            read_options=ReadOptions(format=format, heading_pattern=heading_pattern, encoding=encoding),  # type: ignore[arg-type]
            workers=workers,
            strict=strict,
            show_progress=not quiet,
        )
    except LongreadError as exc:
        raise _fail(exc) from None
    for line in report.summary_lines():
        typer.echo(line)


@app.command("stats")
def stats_command(
    file: Annotated[Path, typer.Argument(help="A longread ChapterBreak JSONL file.")],
) -> None:
    """Statistics of a ChapterBreak set (works, examples per suffix type, chapters and words per work)."""
    from longread.benchmarks.chapterbreak.io import iter_instances
    from longread.benchmarks.chapterbreak.stats import compute_stats, format_stats

    try:
        typer.echo(format_stats(compute_stats(iter_instances(file))))
    except LongreadError as exc:
        raise _fail(exc) from None


@convert_app.command("chapterbreak")
def convert_chapterbreak_command(
    file: Annotated[Path, typer.Argument(help="Input file (longread JSONL or the official JSON layout).")],
    out: Annotated[Path, typer.Option("--out", help="Output file.")],
    to: Annotated[
        str, typer.Option(help="official ({'pg19': {work: [{ctx,pos,negs}]}, 'ao3': …}) or longread.")
    ],
    tokenizer: Annotated[str, typer.Option(help="Tokenizer that recounts tokens when importing.")] = "gpt2",
) -> None:
    """Convert a ChapterBreak set between longread's JSONL and the official layout (both ways)."""
    from longread.benchmarks.chapterbreak.io import iter_instances, write_instances
    from longread.benchmarks.chapterbreak.official import read_official, write_official

    try:
        if to == "official":
            write_official(iter_instances(file), out)
        elif to == "longread":
            count = write_instances(read_official(file, tokenizer=tokenizer), out)
            typer.echo(f"wrote {count} instances to {out}")
        else:
            raise typer.BadParameter("use official or longread", param_hint="--to")
    except LongreadError as exc:
        raise _fail(exc) from None


eval_app = typer.Typer(help="Evaluate a language model on a benchmark file.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")


def _parse_lengths(text: str) -> tuple[int, ...]:
    try:
        lengths = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise typer.BadParameter("give comma-separated token counts, e.g. 256,1024,4096") from None
    if not lengths or min(lengths) < 1:
        raise typer.BadParameter("give at least one positive token count")
    return lengths


@eval_app.command("chapterbreak")
def eval_chapterbreak_command(
    data: Annotated[Path, typer.Option("--data", help="A longread ChapterBreak JSONL file.")],
    model: Annotated[
        str,
        typer.Option(
            "--model",
            help="smollm2 (bundled SmolLM2-135M-Instruct), hf:FOLDER, gguf:FILE, random:llama / random:gpt2.",
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Run directory (config.json, samples.jsonl, results.json).")
    ],
    prefix_lengths: Annotated[
        str, typer.Option(help="Prefix lengths in the model's tokens, comma-separated.")
    ] = "256,512,1024,2048,4096,8192",
    suffix_tokens: Annotated[
        int, typer.Option(help="Each candidate is cut to its first N model tokens.")
    ] = 128,
    limit: Annotated[int | None, typer.Option(help="Evaluate only the first N instances.")] = None,
    sample: Annotated[
        int | None, typer.Option(help="Evaluate a seeded random N instances (spread over books).")
    ] = None,
    sample_seed: Annotated[int, typer.Option(help="Seed of --sample.")] = 0,
    resume: Annotated[
        bool, typer.Option(help="Continue the run in --out: nothing finished is redone.")
    ] = False,
    overwrite: Annotated[bool, typer.Option(help="Delete the run in --out and start again.")] = False,
    mode: Annotated[
        str, typer.Option(help="shared: read the prefix once for all candidates; naive: once per candidate.")
    ] = "shared",
    batch_size: Annotated[int, typer.Option(help="Candidates scored in one forward pass.")] = 8,
    prefill_chunk: Annotated[
        int, typer.Option(help="Prefix tokens per forward pass while prefilling.")
    ] = 512,
    dtype: Annotated[str, typer.Option(help="float32, bfloat16 or float16.")] = "float32",
    device: Annotated[str, typer.Option(help="cpu or cuda.")] = "cpu",
    threads: Annotated[
        int | None, typer.Option(help="CPU threads for the model (default: all cores).")
    ] = None,
    truncate: Annotated[
        bool, typer.Option(help="Cut prompts that exceed the model window (--no-truncate: fail instead).")
    ] = True,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
) -> None:
    """Score all candidates of every instance at each prefix length: accuracy per length, 95% intervals."""
    from longread.benchmarks.chapterbreak.evaluate import EvalSettings, evaluate_chapterbreak
    from longread.models.registry import load_backend
    from longread.report.build import build_report

    settings = EvalSettings(
        prefix_lengths=_parse_lengths(prefix_lengths),
        suffix_tokens=suffix_tokens,
        truncate=truncate,
        limit=limit,
        sample=sample,
        sample_seed=sample_seed,
    )
    if mode not in ("shared", "naive"):
        raise typer.BadParameter("use shared or naive", param_hint="--mode")
    try:
        backend = load_backend(
            model,
            device=device,
            dtype=dtype,
            mode=mode,  # type: ignore[arg-type]
            prefill_chunk=prefill_chunk,
            batch_size=batch_size,
            threads=threads,
        )
        outcome = evaluate_chapterbreak(
            data, backend, out, settings, resume=resume, overwrite=overwrite, show_progress=not quiet
        )
        files = build_report([out], out)
    except LongreadError as exc:
        raise _fail(exc) from None
    typer.echo(
        f"scored {outcome.scored} samples ({outcome.reused} reused from a shorter length that held the whole "
        f"prefix, {outcome.skipped_done} instances already done) → {out}"
    )
    typer.echo(files.table)
    typer.echo(f"plot: {files.plot}")
    if outcome.errors:
        typer.echo(
            f"{len(outcome.errors)} sample(s) failed (logged in {out}/errors.jsonl; --resume retries them):"
        )
        for key, message in outcome.errors:
            typer.echo(f"  {key}: {message}")
        raise typer.Exit(code=1)


@app.command("report")
def report_command(
    runs: Annotated[
        list[Path], typer.Argument(help="Run directories (several runs share one table and plot).")
    ],
    out: Annotated[Path, typer.Option("--out", help="Folder for report.md and the PNG plot.")] = Path(
        "report"
    ),
) -> None:
    """A markdown table and a plot of accuracy against prefix length, for one or more runs."""
    from longread.report.build import build_report

    try:
        files = build_report(list(runs), out)
    except LongreadError as exc:
        raise _fail(exc) from None
    typer.echo(files.table)
    typer.echo(f"report: {files.markdown}")
    typer.echo(f"plot: {files.plot}")


@app.command("read")
def read_command(
    path: Annotated[Path, typer.Argument(help="A book file.")],
    format: Annotated[str, typer.Option("--format", help=FORMAT_HELP)] = "auto",
    heading_pattern: Annotated[
        str | None, typer.Option(help="plain text: regex of chapter heading lines.")
    ] = None,
) -> None:
    """Read one book and list what was found: metadata, chapters (heading, words, opening), and notes."""
    from longread.documents.reader import read_book

    try:
        book = read_book(path, format=format, heading_pattern=heading_pattern)  # type: ignore[arg-type]
    except LongreadError as exc:
        raise _fail(exc) from None
    typer.echo(f"{book.id}: {book.title} — {book.author} [{book.language}] ({len(book.chapters)} chapters)")
    for index, chapter in enumerate(book.chapters):
        parts = f"  [{' / '.join(chapter.parts)}]" if chapter.parts else ""
        opening = " ".join(chapter.text.split()[:8])
        words = len(chapter.text.split())
        typer.echo(f"  {index:3d}  {chapter.heading[:50]:<50}  {words:7,d} words  {opening}{parts}")
    for note in book.notes:
        typer.echo(f"  note: {note}")


@app.command("demo")
def demo_command(
    out: Annotated[Path, typer.Option("--out", help="Folder for the demo's files.")] = Path("demo-out"),
    model: Annotated[str, typer.Option(help="Model spec to evaluate.")] = "smollm2",
    prefix_lengths: Annotated[
        str, typer.Option(help="Prefix lengths, comma-separated.")
    ] = "256,512,1024,2048",
    sample: Annotated[int, typer.Option(help="Instances to evaluate (a seeded sample).")] = 10,
) -> None:
    """Build ChapterBreak from the books bundled with longread, evaluate a model, print the table, plot it."""
    from longread.demo import run_demo

    try:
        run_demo(out, model=model, prefix_lengths=_parse_lengths(prefix_lengths), sample=sample)
    except LongreadError as exc:
        raise _fail(exc) from None


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
