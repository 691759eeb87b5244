"""``longread train suffixlm`` and ``longread train style-pairs``: the two models longread trains."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from longread.cli.options import DeviceOption, ThreadsOption, fail
from longread.errors import LongreadError

train_app = typer.Typer(help="Train a model (SuffixLM).", no_args_is_help=True)


@train_app.command("style-pairs")
def train_style_pairs_command(
    data: Annotated[Path, typer.Option("--data", help="A MuLD style-change training file.")],
    out: Annotated[Path, typer.Option("--out", help="The model JSON to write.")],
    features: Annotated[str, typer.Option(help="stylometric or minilm.")] = "stylometric",
    validation: Annotated[
        Path | None, typer.Option(help="A validation file to pick the threshold on (default: training).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the extra pairs and the classifier.")] = 0,
) -> None:
    """Train the same-author pair classifier of the style-change baseline (then --model style:OUT)."""
    from longread.benchmarks.muld.style_training import train_style_pairs

    try:
        summary = train_style_pairs(data, features, out, seed, validation_file=validation)
    except LongreadError as exc:
        raise fail(exc) from None
    for line in summary.lines():
        typer.echo(line)


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
