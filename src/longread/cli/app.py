"""The ``longread`` command: one subcommand per job. Thin: it parses options and calls the library."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from longread.cli.build import register as register_build_commands
from longread.cli.demo_long import app as demo_long_app
from longread.cli.eval import register as register_eval_command
from longread.cli.muld import register as register_muld_commands
from longread.cli.options import FORMAT_HELP, DeviceOption, ThreadsOption, fail, parse_lengths
from longread.errors import LongreadError
from longread.scaleout.ray_options import normalise_ray_args


class _LongreadGroup(TyperGroup):
    """The root command: ``--ray`` alone is read as ``--ray=local`` (see ``scaleout.ray_options``)."""

    def main(self, args: Sequence[str] | None = None, *rest: Any, **options: Any) -> Any:
        return super().main(
            normalise_ray_args(sys.argv[1:] if args is None else list(args)), *rest, **options
        )


app = typer.Typer(
    cls=_LongreadGroup,
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
train_app = typer.Typer(help="Train a model (SuffixLM).", no_args_is_help=True)
app.add_typer(train_app, name="train")
register_eval_command(app)
register_build_commands(app, build_app, convert_app)
register_muld_commands(build_app, train_app, convert_app)
app.add_typer(demo_long_app)


@app.command("models")
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


@app.command("tasks")
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


@app.command("report")
def report_command(
    runs: Annotated[
        list[Path], typer.Argument(help="Run directories (several runs share one table and plot).")
    ],
    out: Annotated[Path, typer.Option("--out", help="Folder for report.md and the PNG plot.")] = Path(
        "report"
    ),
    group_by: Annotated[
        str | None,
        typer.Option(
            help="Row fields to compare side by side, comma-separated (e.g. suffix_type,negatives_from)."
        ),
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Folder for one self-contained HTML page (index.html): tables, curves, "
            "configs side by side, a per-sample browser.",
        ),
    ] = None,
) -> None:
    """A markdown table and a memory-curve plot (primary metric against the x-axis) of one or more runs."""
    from longread.report.build import build_report

    fields = [part.strip() for part in (group_by or "").split(",") if part.strip()]
    try:
        files = build_report(list(runs), out, group_by=fields)
    except LongreadError as exc:
        raise fail(exc) from None
    typer.echo(files.table)
    typer.echo(f"report: {files.markdown}")
    for plot in (files.plot, files.grouped_plot, files.every_metric_plot):
        if plot is not None:
            typer.echo(f"plot: {plot}")
    if html is not None:
        from longread.report.html import build_html_report

        try:
            page = build_html_report(list(runs), html)
        except LongreadError as exc:
            raise fail(exc) from None
        typer.echo(f"html: {page}")


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
        raise fail(exc) from None
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


@app.command("demo-narrativexl")
def demo_narrativexl_command(
    out: Annotated[Path, typer.Option("--out", help="Folder for the demo's files.")] = Path(
        "demo-out/narrativexl"
    ),
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


@train_app.command("suffixlm")
def train_suffixlm_command(
    books: Annotated[list[Path], typer.Option("--books", help="Book files or folders; split by book.")],
    out: Annotated[Path, typer.Option("--out", help="Run folder: checkpoints, history, suffixlm.pt.")],
    train_books: Annotated[int | None, typer.Option(help="Training books drawn (rest unused).")] = 32,
    val_books: Annotated[int, typer.Option(help="Validation books.")] = 4,
    max_segments_per_book: Annotated[int | None, typer.Option(help="Segments per book.")] = 400,
    variant: Annotated[str, typer.Option(help="A frozen, B avg-attention, C segdrop, D tuned, E cut.")] = "A",
    encoder: Annotated[str, typer.Option(help="'minilm' or an HF encoder folder.")] = "minilm",
    encoder_layers: Annotated[int | None, typer.Option(help="Keep the encoder's first N layers.")] = 2,
    d_model: Annotated[int, typer.Option(help="Width.")] = 256,
    layers: Annotated[int, typer.Option(help="Causal Transformer layers.")] = 3,
    heads: Annotated[int, typer.Option(help="Attention heads.")] = 4,
    ffn: Annotated[int, typer.Option(help="FFN width.")] = 1024,
    context_segments: Annotated[int, typer.Option(help="Segments of context read.")] = 64,
    epochs: Annotated[int, typer.Option(help="Epochs.")] = 8,
    batch_size: Annotated[int, typer.Option(help="Windows per batch.")] = 16,
    lr: Annotated[float, typer.Option(help="Adam peak learning rate.")] = 7e-5,
    warmup_steps: Annotated[int, typer.Option(help="Linear warm-up steps, then cosine.")] = 50,
    segdrop: Annotated[float, typer.Option(help="Variant C: drop prefix segments with this p.")] = 0.2,
    seed: Annotated[int, typer.Option(help="Seed (split, windows, init).")] = 0,
    device: DeviceOption = "cpu",
    threads: ThreadsOption = None,
    cache_dir: Annotated[Path | None, typer.Option(help="Segment-vector cache folder.")] = None,
) -> None:
    """Train SuffixLM (contrastive, in-batch negatives); resumes from OUT/last.pt; writes OUT/suffixlm.pt."""
    from longread.benchmarks.chapterbreak.suffixlm import validation_questions
    from longread.models.suffixlm.config import ModelConfig
    from longread.models.suffixlm.run import make_config, train_and_export

    model = ModelConfig.model_validate(
        dict(
            encoder=encoder,
            encoder_layers=encoder_layers,
            variant=variant,
            d_model=d_model,
            layers=layers,
            heads=heads,
            ffn=ffn,
            context_segments=context_segments,
        )
    )
    config = make_config(
        [str(b) for b in books],
        str(out),
        model=model,
        train_books=train_books,
        val_books=val_books,
        max_segments_per_book=max_segments_per_book,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        warmup_steps=warmup_steps,
        segdrop=segdrop,
        seed=seed,
        device=device,
        cache_dir=str(cache_dir) if cache_dir else None,
    )
    train_and_export(config, validation_questions, threads=threads)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
