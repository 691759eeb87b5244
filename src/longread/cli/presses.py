"""``longread presses``: the KV-cache presses against the full cache, on the same samples.

The full-cache run, then every press × ratio, into ``--out`` (``full/``, ``snapkv-0.5/`` …; each
resumable), the model loaded once; then ``presses.md``/``.json``/``.png``
(:mod:`longread.report.press_report`). ``--list`` names the presses kvpress offers here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from longread.cli.ablate import parse_list, show_report
from longread.cli.calibrate import CopyOption, SeedOption, parse_counts
from longread.cli.eval import LimitOption, SampleOption, SampleSeedOption
from longread.cli.interrupts import RunAnnouncer
from longread.cli.options import (
    DeviceOption,
    DtypeOption,
    MaxLengthOption,
    QuietOption,
    TaskSettingOption,
    ThreadsOption,
    backend_from_options,
    fail,
    parse_lengths,
    parse_task_options,
)
from longread.cli.planning import TargetEffectOption, announce_plan
from longread.errors import LongreadError

if TYPE_CHECKING:
    from longread.calibration.run import CalibrationPlan
    from longread.evaluation.runner import RunOptions
    from longread.models.hf.backend import HFBackend
    from longread.models.press_spec import PressSpec
    from longread.report.press_report import CacheGeometry
    from longread.report.press_runs import PressRun

presses_app = typer.Typer()

PressesOption = Annotated[
    str,
    typer.Option(
        "--presses", help="kvpress presses, comma-separated (snake case, e.g. snapkv,knorm,streaming_llm)."
    ),
]
RatiosOption = Annotated[
    str,
    typer.Option(
        "--ratios", help="Compression ratios, comma-separated, each in [0, 1) (the full cache is always run)."
    ),
]
PressesOutOption = Annotated[
    Path | None, typer.Option("--out", help="Folder for the runs and presses.md/.json/.png.")
]
PressPrefixOption = Annotated[
    str | None, typer.Option("--prefix-lengths", help="ChapterBreak prefix lengths, e.g. 2048,8192.")
]
PlantOption = Annotated[
    str | None,
    typer.Option(
        "--distances",
        help="ChapterBreak: also plant a copy of the gold's opening this many tokens before the prefix's "
        "end (comma-separated) and give each press's copy horizon.",
    ),
]


def _list_presses() -> None:
    from longread.models.press_spec import PressError, available_presses, kvpress_version

    try:
        names = available_presses()
    except PressError as exc:
        raise fail(exc) from None
    typer.echo(f"kvpress {kvpress_version()}: {len(names)} presses take a compression ratio alone")
    for name, cls in names.items():
        doc = (cls.__doc__ or "").strip().splitlines()
        typer.echo(f"  {name:<24} {cls.__name__}" + (f" — {doc[0]}" if doc else ""))


def _plan(presses: str, ratios: str) -> list[PressSpec]:
    from longread.models.press_spec import PressError, parse_press

    try:
        values = [float(r) for r in parse_list(ratios, "ratio")]
    except ValueError:
        raise typer.BadParameter(f"--ratios takes numbers, e.g. 0.25,0.5,0.75; got {ratios!r}") from None
    if any(not 0 <= value < 1 for value in values):
        raise typer.BadParameter("each ratio must be in [0, 1) (0: the press's no-op, against the full one)")
    try:
        return [parse_press(f"{name}:{value}") for name in parse_list(presses, "press") for value in values]
    except PressError as exc:
        raise typer.BadParameter(str(exc), param_hint="--presses") from None


@presses_app.command("presses")
def presses_command(
    task: Annotated[str | None, typer.Argument(help="chapterbreak, narrativexl-summaries, muld-…")] = None,
    data: Annotated[
        Path | None, typer.Option("--data", help="The task's data (as `longread eval` takes).")
    ] = None,
    model: Annotated[
        str, typer.Option("--model", help="A local model spec (smollm2, gemma3, hf:…).")
    ] = "smollm2",
    out: PressesOutOption = None,
    presses: PressesOption = "snapkv,knorm,streaming_llm,expected_attention",
    ratios: RatiosOption = "0.25,0.5,0.75",
    prefix_lengths: PressPrefixOption = None,
    distances: PlantOption = None,
    copy_tokens: CopyOption = 64,
    seed: SeedOption = 0,
    option: TaskSettingOption = None,
    sample: SampleOption = None,
    sample_seed: SampleSeedOption = 0,
    limit: LimitOption = None,
    list_presses: Annotated[bool, typer.Option("--list", help="List kvpress's presses and exit.")] = False,
    device: DeviceOption = "cpu",
    dtype: DtypeOption = "float32",
    threads: ThreadsOption = None,
    max_length: MaxLengthOption = None,
    quiet: QuietOption = False,
    target_effect: TargetEffectOption = None,
) -> None:
    """Does a compressed KV cache keep what the model read? Each kvpress press × ratio paired with the full
    cache on the same samples: differences with 95% intervals and McNemar's p, cache kept, time, memory;
    with --distances, how far back a planted copy survives each press."""
    if list_presses:
        _list_presses()
        return
    if task is None or data is None or out is None:
        raise typer.BadParameter("give TASK, --data and --out (or --list)")
    from longread.evaluation.controls import reads_along
    from longread.evaluation.registry import make_task
    from longread.evaluation.runner import RunOptions
    from longread.report.press_report import write_presses
    from longread.report.press_runs import run_presses

    settings = parse_task_options(option or [])
    if prefix_lengths is not None:
        settings["prefix_lengths"] = ",".join(map(str, parse_lengths(prefix_lengths)))
    try:
        planting = _planting(task, distances, copy_tokens, seed, make_task(task, settings))
    except LongreadError as exc:
        raise fail(exc) from None
    plan = _plan(presses, ratios)
    try:
        from longread.models.registry import check_pressable

        check_pressable(model, plan[0])
        if reads_along(make_task(task, settings)):
            raise typer.BadParameter(
                f"{task} reads each book along on one growing cache, which kvpress cannot press; "
                "compare presses on narrativexl-summaries"
            )
    except LongreadError as exc:
        raise fail(exc) from None
    run_options = RunOptions(limit=limit, sample=sample, sample_seed=sample_seed, resume=True,
                             show_progress=not quiet)  # fmt: skip
    announce_plan(out / "presses.json", target_effect, sample)
    announce = RunAnnouncer(out)

    try:
        backend = backend_from_options(model, device=device, dtype=dtype, mode="shared", batch_size=8,
                                       prefill_chunk=512, threads=threads, max_length=max_length)  # fmt: skip
        make = functools.partial(make_task, task, settings)
        if planting is None:
            runs = run_presses(make, data, backend, out, plan, run_options, on_run=announce)
            files = write_presses(runs, out, cache_geometry(backend))
        else:
            files, runs = _planted(planting, make, data, backend, out, plan, run_options, announce)
    except KeyboardInterrupt as interrupt:
        raise announce.interrupted(interrupt) from None
    except LongreadError as exc:
        raise fail(exc) from None
    show_report(files[0], tuple(files), sum(run.failed for run in runs))


def _planting(
    task: str, distances: str | None, copy_tokens: int, seed: int, made: Any
) -> CalibrationPlan | None:
    """The plan of the planted copies (None without --distances), checked against the prefix lengths."""
    if distances is None:
        return None
    from longread.calibration.run import CalibrationPlan, check_distances

    if task != "chapterbreak":
        raise typer.BadParameter(f"--distances plants copies in chapterbreak data only (not {task})")
    plan = CalibrationPlan(parse_counts(distances, "--distances"), (), (), copy_tokens, seed)
    check_distances(plan.distances, copy_tokens, made.settings.prefix_lengths)
    return plan


def _planted(
    planting: CalibrationPlan,
    make: Callable[[], Any],
    data: Path,
    backend: HFBackend,
    out: Path,
    plan: Sequence[PressSpec],
    options: RunOptions,
    announce: RunAnnouncer,
) -> tuple[list[Path], list[PressRun]]:
    """Plant (the chosen instances into ``unplanted.jsonl``, their copies into ``planted.jsonl``), run
    every setting on both, and write the report with each setting's copy horizon."""
    from longread.calibration.press_horizons import horizon_section, press_horizons
    from longread.calibration.run import prepare_data
    from longread.evaluation.runner import RunOptions
    from longread.report.press_report import write_presses
    from longread.report.press_runs import run_presses

    unplanted, planted_file, planted = prepare_data(data, out, planting, backend.count_tokens, options)
    chosen = RunOptions(resume=True, show_progress=options.show_progress)
    runs = run_presses(make, unplanted, backend, out, plan, chosen, on_run=announce)

    def on_planted(index: int, total: int, name: str, path: Path) -> None:
        announce(index, total, f"planted/{name}", path)

    copied = run_presses(make, planted_file, backend, out / "planted", plan, chosen, on_run=on_planted)
    lengths = make().settings.prefix_lengths
    section = horizon_section(press_horizons(runs, copied, planted, lengths), planting.copy_tokens, out)
    files = write_presses(runs, out, cache_geometry(backend), section)
    return [*files, planted_file], [*runs, *copied]


def cache_geometry(backend: HFBackend) -> CacheGeometry:
    """Bytes per cache entry and each layer's window, from the loaded model's config."""
    from longread.models.hf.pressed.layer_masks import layer_windows
    from longread.report.press_report import CacheGeometry

    model = backend.model
    config = model.config
    heads = int(getattr(config, "num_key_value_heads", None) or config.num_attention_heads)
    head_dim = int(getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads)
    size = next(model.parameters()).element_size()
    return CacheGeometry(2 * heads * head_dim * size, tuple(layer_windows(model)))
