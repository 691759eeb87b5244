"""``longread export TASK --data FILE|DIR --to hf|lm-eval|inspect --out DIR``: one command per task."""

from __future__ import annotations

import inspect
import shlex
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated

import typer

from longread.cli.options import (
    MaxLengthOption,
    TaskSettingOption,
    fail,
    parse_lengths,
    parse_task_options,
)
from longread.errors import LongreadError

export_app = typer.Typer(
    help="Export built benchmark data for Hugging Face datasets, lm-evaluation-harness or inspect_ai.",
    no_args_is_help=True,
)

DataOption = Annotated[
    Path, typer.Option("--data", help="The JSONL file `longread build` wrote (or a folder of them).")
]
TargetOption = Annotated[
    str, typer.Option("--to", help="hf (datasets folder), lm-eval (task folder) or inspect.")
]
OutOption = Annotated[Path, typer.Option("--out", help="Folder to write (new or empty).")]
ExportTokenizerOption = Annotated[
    str,
    typer.Option(
        help="Tokenizer the cuts count in: gpt2 (the paper's budgets), smollm2, gemma3 or hf:FOLDER "
        "(use the evaluated model's own for token-exact cuts)."
    ),
]
OverwriteOption = Annotated[bool, typer.Option("--overwrite", help="Replace a non-empty --out folder.")]
ExportSettingOption = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        "-o",
        help="A task setting as KEY=VALUE (repeat), as `longread eval` takes it; the items follow it.",
    ),
]


@export_app.command("chapterbreak")
def export_chapterbreak_command(
    data: DataOption,
    to: TargetOption,
    out: OutOption,
    tokenizer: ExportTokenizerOption = "gpt2",
    prefix_lengths: Annotated[
        str | None,
        typer.Option(
            help="Prefix lengths (tokens), one config / lm-eval task each [default: -o prefix_lengths, or "
            "256,512,1024,2048,4096,8192]."
        ),
    ] = None,
    suffix_tokens: Annotated[
        int | None,
        typer.Option(help="Every choice is cut to its first N tokens [default: -o suffix_tokens, or 128]."),
    ] = None,
    option: ExportSettingOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    """ChapterBreak: one item per instance and prefix length, cut as longread cuts it."""
    settings = tuple(parse_task_options(option or []).items())
    lengths = prefix_lengths
    _export("chapterbreak", data, to, out, tokenizer, lengths, suffix_tokens, overwrite, settings=settings)


def _export(
    task: str,
    data: Path,
    to: str,
    out: Path,
    tokenizer: str,
    lengths: str | None,
    suffix_tokens: int | None,
    overwrite: bool,
    max_length: int | None = None,
    settings: tuple[tuple[str, str], ...] = (),
) -> None:
    from longread.export import ExportOptions, export_task

    parsed = parse_lengths(lengths) if lengths is not None else None
    options = ExportOptions(
        tokenizer, parsed, suffix_tokens, overwrite, max_length, settings, show_progress=True
    )
    command = shlex.join(["longread", *map(portable, sys.argv[1:])]) if sys.argv[1:2] == ["export"] else ""
    try:
        report = export_task(task, data, to, out, options, command)
    except LongreadError as exc:
        raise fail(exc) from None
    for line in report.summary_lines():
        typer.echo(line)


@export_app.command("narrativexl-summaries")
def export_summaries_command(
    data: Annotated[
        Path,
        typer.Option("--data", help="The build directory `longread build narrativexl` wrote (or its files)."),
    ],
    to: TargetOption,
    out: OutOption,
    tokenizer: ExportTokenizerOption = "gpt2",
    prefix_lengths: Annotated[
        str, typer.Option(help="Scene budgets (tokens of scene + prompt), one config / lm-eval task each.")
    ] = "256,1024,4096",
    option: ExportSettingOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    """NarrativeXL summaries: a scene, its true summary among distorted ones (scored whole)."""
    settings = tuple(parse_task_options(option or []).items())
    task = "narrativexl-summaries"
    _export(task, data, to, out, tokenizer, prefix_lengths, None, overwrite, settings=settings)


@export_app.command("narrativexl")
def export_readalong_command(
    data: Annotated[
        Path,
        typer.Option("--data", help="The build directory `longread build narrativexl` wrote (or its files)."),
    ],
    to: TargetOption,
    out: OutOption,
    tokenizer: ExportTokenizerOption = "gpt2",
    prefix_lengths: Annotated[
        str,
        typer.Option(
            help="Context lengths (tokens of the book read so far + prompt, cut from the left), one config / "
            "lm-eval task each: `longread eval narrativexl -o window=N` on a model without read-along."
        ),
    ] = "1024,4096,16384",
    option: ExportSettingOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    """NarrativeXL read-along: the book read up to each question, then its options (the true one last)."""
    settings = tuple(parse_task_options(option or []).items())
    _export("narrativexl", data, to, out, tokenizer, prefix_lengths, None, overwrite, settings=settings)


@export_app.command("muld/style-change")
def export_style_change_command(
    data: Annotated[Path, typer.Option("--data", help="The JSONL `longread build muld/style-change` wrote.")],
    to: TargetOption,
    out: OutOption,
    tokenizer: ExportTokenizerOption = "gpt2",
    option: ExportSettingOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    """MuLD style change for a language model: one " yes"/" no" same-author question per paragraph
    boundary (-o paragraph_tokens=N cuts each paragraph, default 256); PAN F1 pooled over boundaries."""
    settings = tuple(parse_task_options(option or []).items())
    _export("muld/style-change", data, to, out, tokenizer, None, None, overwrite, settings=settings)


MuldDataOption = Annotated[Path, typer.Option("--data", help="The JSONL `longread build muld/TASK` wrote.")]
GenerateTargetOption = Annotated[
    str,
    typer.Option(
        "--to",
        help="hf (datasets folder, read back by `longread eval`), lm-eval (a generate_until task) or inspect "
        "(a generate() task; a vLLM server must take the request's chat template).",
    ),
]
ModelTokenizerOption = Annotated[
    str, typer.Option(help="The evaluated model's tokenizer: smollm2, gemma3 or hf:FOLDER.")
]


def export_muld(
    task: str,
    data: MuldDataOption,
    to: GenerateTargetOption,
    out: OutOption,
    tokenizer: ModelTokenizerOption,
    max_length: MaxLengthOption = None,
    option: TaskSettingOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    """Export one MuLD generation task to hf, lm-eval or inspect (the command of a row of
    :data:`MULD_EXPORTS`, with ``task`` bound)."""
    settings = tuple(parse_task_options(option or []).items())
    _export(task, data, to, out, tokenizer, "1", None, overwrite, max_length, settings)


# One row per exported MuLD task: the task, the command's help. Adding a task is one row.
MULD_EXPORTS: dict[str, str] = {
    "muld/vlsp": "MuLD VLSP (mode=first): each prompt fitted to the model's window exactly as "
    "`longread eval` fits it.",
    "muld/narrativeqa": "MuLD NarrativeQA: retrieved chunks (or the start), then the question, fitted as "
    "longread fits them.",
    "muld/hotpotqa": "MuLD HotpotQA: the retrieved chunks and the question, fitted as longread fits them.",
    "muld/opensubtitles": "MuLD OpenSubtitles EN→DE (strategy=whole): the film's subtitles fitted to the "
    "window less -o whole_output_tokens, translated at once, as longread does it.",
    "muld/character-archetype": 'MuLD character archetype: multiple choice " Hero" / " Villain" after the '
    "chunks that mention the character, cut for the model's window as longread cuts it; macro F1.",
}


def muld_export_command(task: str) -> Callable[..., None]:
    """:func:`export_muld` with ``task`` bound, carrying the signature typer reads the options from."""
    command = partial(export_muld, task)
    parameters = list(inspect.signature(export_muld, eval_str=True).parameters.values())[1:]
    vars(command).update(__signature__=inspect.Signature(parameters), __annotations__={})
    return command


for _task, _help in MULD_EXPORTS.items():
    export_app.command(_task, help=_help)(muld_export_command(_task))


def portable(argument: str) -> str:
    """An argument as a card may show it: a path (``/tmp/x/cb.jsonl``, ``hf:/models/m``) by its name only,
    so an exported folder records nothing of the exporter's machine."""
    prefix, _, rest = (
        argument.rpartition(":") if argument.startswith(("hf:", "gguf:")) else ("", "", argument)
    )
    if "/" not in rest or "://" in argument:
        return argument
    name = Path(rest.rstrip("/")).name or rest
    return f"{prefix}:{name}" if prefix else name
