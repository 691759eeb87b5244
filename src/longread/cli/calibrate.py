"""``longread calibrate``: does the instrument find an effect that was planted?

The chosen instances are planted with a copy of their gold's opening at each distance, and the
unplanted and planted data go through the intact run and every control × K (model loaded once, each run
resumable); ``calibration.md``/``.json``/``.png`` say, per distance and control, whether the control
detects the planted copy, keeps it, misses it or raises a false alarm, and give the copy horizon
(:mod:`longread.calibration`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from longread.cli.ablate import ControlsOption, KeepLastListOption, parse_list, show_report
from longread.cli.eval import DataOption, LimitOption, SampleOption, SampleSeedOption, TaskArgument
from longread.cli.interrupts import RunAnnouncer
from longread.cli.options import (
    DeviceOption,
    DtypeOption,
    MaxLengthOption,
    ModelOption,
    QuietOption,
    RayOption,
    RayWorkersOption,
    TaskSettingOption,
    ThreadsOption,
    backend_from_options,
    fail,
    parse_task_options,
    ray_for_command,
)
from longread.cli.planning import TargetEffectOption, announce_plan
from longread.errors import LongreadError

calibrate_app = typer.Typer()

DistancesOption = Annotated[
    str,
    typer.Option(
        "--distances",
        help="Distances of the planted copy (tokens from its start to the prefix's end), comma-separated.",
    ),
]
LengthsOption = Annotated[
    str, typer.Option("--prefix-lengths", help="Prefix lengths in the model's tokens, comma-separated.")
]
CopyOption = Annotated[int, typer.Option("--copy-tokens", help="Tokens of the gold's opening copied.")]
SeedOption = Annotated[int, typer.Option("--seed", help="Seeds the copy's place and every control.")]
OutOption = Annotated[Path, typer.Option("--out", help="Folder for the data, the runs and the calibration.")]
SUPPORTED = ("chapterbreak",)


def parse_counts(text: str, option: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in parse_list(text, "value"))
    except ValueError:
        raise typer.BadParameter(
            f"takes token counts, e.g. 512,1024; got {text!r}", param_hint=option
        ) from None
    if min(values) < 0:
        raise typer.BadParameter(f"takes counts of 0 or more; got {text!r}", param_hint=option)
    return values


@calibrate_app.command("calibrate")
def calibrate_command(
    task: TaskArgument,
    data: DataOption,
    model: ModelOption,
    out: OutOption,
    prefix_lengths: LengthsOption = "2048",
    distances: DistancesOption = "512,1024",
    controls: ControlsOption = "shuffle,replace,none",
    keep_last: KeepLastListOption = "256,1536",
    copy_tokens: CopyOption = 64,
    seed: SeedOption = 0,
    option: TaskSettingOption = None,
    sample: SampleOption = None,
    sample_seed: SampleSeedOption = 0,
    limit: LimitOption = None,
    device: DeviceOption = "cpu",
    dtype: DtypeOption = "float32",
    threads: ThreadsOption = None,
    max_length: MaxLengthOption = None,
    quiet: QuietOption = False,
    target_effect: TargetEffectOption = None,
    ray: RayOption = None,
    ray_workers: RayWorkersOption = None,
) -> None:
    """Plant a copy of the answer in the distant context and check that the context controls find it:
    verdicts per distance × control × K, and the copy horizon."""
    from longread.calibration.run import CalibrationError, CalibrationPlan, check_plan, run_calibration
    from longread.evaluation.registry import make_task
    from longread.evaluation.runner import RunOptions

    if task not in SUPPORTED:
        raise typer.BadParameter(
            f"calibrate plants copies in {', '.join(SUPPORTED)} data only (not {task}); build ChapterBreak "
            "from the same books with `longread build chapterbreak` and calibrate on it",
            param_hint="TASK",
        )
    lengths = parse_counts(prefix_lengths, "--prefix-lengths")
    plan = CalibrationPlan(
        distances=parse_counts(distances, "--distances"),
        controls=tuple(parse_list(controls, "control")),
        keep_last=parse_counts(keep_last, "--keep-last"),
        copy_tokens=copy_tokens,
        seed=seed,
    )
    settings = {**parse_task_options(option or []), "prefix_lengths": ",".join(map(str, lengths))}
    try:
        check_plan(plan, lengths)
        make_task(task, settings)
    except LongreadError as exc:
        raise fail(exc) from None
    announce_plan(out / "calibration.json", target_effect, sample)
    announce = RunAnnouncer(out)

    options = RunOptions(limit=limit, sample=sample, sample_seed=sample_seed, show_progress=not quiet)
    try:
        with ray_for_command(ray, ray_workers) as on_ray:
            backend = backend_from_options(model, device=device, dtype=dtype, mode="shared", batch_size=8,
                                           prefill_chunk=512, threads=threads, max_length=max_length,
                                           ray=on_ray)  # fmt: skip
            count = getattr(backend, "count_tokens", None)
            if not callable(count):
                raise CalibrationError(
                    f"{model}: this backend cannot count its tokens, and the copy is planted in the model's "
                    "tokens; use a local, GGUF, served or Ray-replicated model"
                )
            files = run_calibration(lambda: make_task(task, settings), data, backend, out, plan, options,
                                    count=count, on_run=announce)  # fmt: skip
    except KeyboardInterrupt as interrupt:
        raise announce.interrupted(interrupt) from None
    except LongreadError as exc:
        raise fail(exc) from None
    show_report(files.markdown, (files.markdown, files.json_file, files.plot, files.planted), files.failed)
