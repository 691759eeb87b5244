"""Command-line options shared by several commands, each declared once as an ``Annotated`` alias
(lighteval's way), and the small helpers every command module uses (errors, ``--ray``, the model).

A command takes a shared option as one parameter, ``device: DeviceOption = "cpu"``; an option only
one command has is declared in that command's signature. A new option of a command is one more
parameter there; a new shared option is one more alias here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from longread.errors import LongreadError

if TYPE_CHECKING:
    from pydantic import ValidationError

ModelOption = Annotated[
    str,
    typer.Option(
        "--model",
        help="smollm2 (bundled SmolLM2-135M-Instruct), gemma3, suffixlm (bundled SuffixLM), hf:FOLDER, "
        "gguf:FILE, suffixlm:DIR, random:llama / random:gpt2, a served model "
        "openai:BASE_URL#MODEL[?tokenizer=…&concurrency=4&timeout=120&max_retries=4&self_check=false] or "
        "openai:CONFIG.json (key from $OPENAI_API_KEY), style:stylometric|minilm|MODEL.json. "
        "`longread models` lists them.",
    ),
]
DeviceOption = Annotated[str, typer.Option(help="cpu or cuda.", rich_help_panel="Model")]
DtypeOption = Annotated[str, typer.Option(help="float32, bfloat16 or float16.", rich_help_panel="Model")]
ModeOption = Annotated[
    str,
    typer.Option(
        help="shared: read the prefix once for all candidates; naive: once per candidate.",
        rich_help_panel="Model",
    ),
]
BatchSizeOption = Annotated[
    int, typer.Option(help="Candidates scored in one forward pass.", rich_help_panel="Model")
]
PrefillChunkOption = Annotated[
    int, typer.Option(help="Prefix tokens per forward pass while prefilling.", rich_help_panel="Model")
]
ThreadsOption = Annotated[
    int | None, typer.Option(help="CPU threads for the model (default: all cores).", rich_help_panel="Model")
]
MaxLengthOption = Annotated[
    int | None,
    typer.Option(help="Override the model's context window (tokens).", rich_help_panel="Model"),
]

DEFAULT_PREFILL_CHUNK = 512
TaskSettingOption = Annotated[
    list[str] | None,
    typer.Option("--option", "-o", help="A task setting as KEY=VALUE (repeat); `longread tasks` lists them."),
]

RayOption = Annotated[
    str | None,
    typer.Option(
        "--ray",
        metavar="[ADDRESS]",
        help="Run on Ray: --ray alone starts a local Ray on this machine; --ray HOST:PORT (or "
        "ray://HOST:PORT, auto) joins an existing cluster (needs the optional extra named ray).",
        rich_help_panel="Scale-out",
    ),
]
RayWorkersOption = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Model replicas on Ray (default: one per GPU of the cluster with --device cuda, else 2); "
        "--threads is split between them.",
        rich_help_panel="Scale-out",
        show_default=False,
    ),
]


QuietOption = Annotated[bool, typer.Option(help="No progress bar.")]

FORMAT_HELP = (
    "Input format: auto (from the file: .txt with Gutenberg markers → gutenberg, PG-19 split folders → pg19, "
    ".html → ao3-html, .epub → epub, .jsonl → jsonl, other text → plain), or one of "
    "gutenberg, pg19, plain, ao3-html, epub, jsonl."
)
FormatOption = Annotated[str, typer.Option("--format", help=FORMAT_HELP)]

# MuLD's builders (``longread build muld/TASK``)
SourceOption = Annotated[
    list[Path], typer.Option("--source", help="Source path (repeat; see the command help).")
]
MuldOutOption = Annotated[Path, typer.Option("--out", help="Output file: FILE.jsonl or FILE.jsonl.bz2.")]
MinTokensOption = Annotated[
    int, typer.Option(help="The paper's filter: drop documents shorter than this many tokens.")
]
LengthTokenizerOption = Annotated[
    str, typer.Option(help="Tokenizer of the length filter (gpt2, or hf:FOLDER).")
]


def ray_from_options(value: str | None, workers: int | None) -> Any:
    """The ``scaleout.ray_options.RayOptions`` of ``--ray`` / ``--ray-workers`` (None without)."""
    from longread.scaleout.ray_options import ray_options

    try:
        return ray_options(value, workers)
    except LongreadError as exc:
        raise typer.BadParameter(str(exc), param_hint="--ray") from None


PressOption = Annotated[
    str | None,
    typer.Option(
        "--press",
        help="Read every context under a kvpress KV-cache press, NAME[:RATIO] (e.g. snapkv:0.5; also "
        "-o press=…); `longread presses --list` names them. Local models only, in the presses environment.",
    ),
]


def press_from_options(press: str | None, settings: dict[str, str]) -> Any:
    """The press ``--press`` (or ``-o press=…``, taken out of the task's settings) names, checked against
    kvpress before any model loads; None without one."""
    text = press if press is not None else settings.pop("press", None)
    settings.pop("press", None)
    if text is None:
        return None
    from longread.models.press_spec import PressError, parse_press

    try:
        return parse_press(text)
    except PressError as exc:
        raise typer.BadParameter(str(exc), param_hint="--press") from None


def backend_from_options(
    model: str,
    *,
    device: str,
    dtype: str,
    mode: str,
    batch_size: int,
    prefill_chunk: int,
    threads: int | None,
    max_length: int | None = None,
    ray: Any = None,
    press: Any = None,
) -> Any:
    """Load the model the shared options name (errors are ``LongreadError``s with what to do); with
    ``ray`` (``scaleout.ray_options.RayOptions``) as replicas on Ray, ``threads`` split between them."""
    if mode not in ("shared", "naive"):
        raise typer.BadParameter("use shared or naive", param_hint="--mode")
    options: dict[str, Any] = {
        "device": device,
        "dtype": dtype,
        "mode": mode,
        "prefill_chunk": prefill_chunk,
        "batch_size": batch_size,
        "threads": threads,
        "max_length": max_length,
    }
    if press is not None:
        options["press"] = press
    if ray is not None:
        from longread.scaleout.ray_backend import wrap_with_ray

        return wrap_with_ray(model, options, address=ray.address, workers=ray.workers)
    from longread.models.registry import load_backend

    return load_backend(model, **options)


@contextmanager
def ray_for_command(value: str | None, workers: int | None) -> Iterator[Any]:
    """The ``RayOptions`` of ``--ray`` / ``--ray-workers`` (None without) for the length of a command;
    the Ray it used is left (a local one stopped) when the command ends, however it ends."""
    options = ray_from_options(value, workers)
    try:
        yield options
    finally:
        if options is not None:
            from longread.scaleout.ray_session import stop_ray

            stop_ray()


def invalid_settings(exc: ValidationError, option_of: Mapping[str, str]) -> typer.Exit:
    """A settings model refused what the options gave: print each refusal under its option's name
    (``option_of`` maps a field to its option; otherwise ``--field-name``) and exit with code 2."""
    reasons = []
    for error in exc.errors():
        field = str(error["loc"][-1]) if error["loc"] else ""
        option = option_of.get(field, "--" + field.replace("_", "-"))
        reasons.append(f"{option}: {error['msg']} (given {error.get('input')!r})")
    typer.echo(f"error: {'; '.join(reasons)}. See --help for what each option takes.", err=True)
    return typer.Exit(code=2)


def fail(exc: Exception) -> typer.Exit:
    """Print the error (it names what is wrong and what to do) and exit with code 2."""
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(code=2)


def parse_lengths(text: str) -> tuple[int, ...]:
    """``256,1024,512`` → ``(256, 512, 1024)``: sorted, without repeats, each at least 1."""
    try:
        lengths = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise typer.BadParameter("give comma-separated token counts, e.g. 256,1024,4096") from None
    if not lengths or min(lengths) < 1:
        raise typer.BadParameter("give at least one positive token count")
    return lengths


def parse_task_options(pairs: Sequence[str]) -> dict[str, str]:
    """``-o KEY=VALUE`` pairs as task settings (dashes in keys become underscores)."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(
                f"{pair!r}: write KEY=VALUE, e.g. -o suffix_tokens=64", param_hint="--option"
            )
        options[key.strip().replace("-", "_")] = value.strip()
    return options
