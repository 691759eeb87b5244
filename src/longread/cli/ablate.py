"""``longread ablate``: the context-use report in one command.

The intact run and each control × K on the same samples, into ``--out`` (``intact/``,
``shuffle-k512/`` …; each resumable, an intact run already there is reused), the model loaded once;
then the context-use report (``context_use.md``/``.json``/``.png``, :mod:`longread.report.context_use`)
and the HTML page of all the runs (``html/index.html``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

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

ablate_app = typer.Typer()

KeepLastListOption = Annotated[
    str, typer.Option("--keep-last", help="Tokens kept intact, comma-separated (0: perturb everything).")
]
ControlsOption = Annotated[
    str, typer.Option("--controls", help="Context controls, comma-separated: shuffle, replace, none.")
]
MetricsOption = Annotated[
    str,
    typer.Option(
        "--metrics",
        help="The task's metrics to compare, comma-separated (default: its primary one; `longread tasks` "
        "lists them).",
    ),
]
AblateOutOption = Annotated[
    Path, typer.Option("--out", help="Folder for the runs and the context-use report.")
]


def parse_list(text: str, what: str) -> list[str]:
    items = [part.strip() for part in text.split(",") if part.strip()]
    if not items:
        raise typer.BadParameter(f"give at least one {what}")
    return list(dict.fromkeys(items))


@ablate_app.command("ablate")
def ablate_command(
    task: TaskArgument,
    data: DataOption,
    model: ModelOption,
    out: AblateOutOption,
    keep_last: KeepLastListOption = "0,512,2048",
    controls: ControlsOption = "shuffle,replace,none",
    metrics: MetricsOption = "",
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
    """Does the model use what it read? The intact run and each context control × K on the same samples,
    paired instance by instance: differences with 95% intervals, p-values, one sentence each, a plot."""
    from longread.evaluation.controls import ControlError, ControlSettings
    from longread.evaluation.registry import make_task
    from longread.evaluation.runner import RunOptions
    from longread.report.ablation import run_ablation

    settings = parse_task_options(option or [])
    try:
        keeps = [int(k) for k in parse_list(keep_last, "K")]
        kinds: list[Any] = parse_list(controls, "control")
        plans = [ControlSettings(kind, keep, sample_seed) for kind in kinds for keep in keeps]
        chosen = make_task(task, settings)  # a bad task, setting or metric is refused before the model loads
        names = parse_list(metrics, "metric") if metrics.strip() else []
        known = [metric.name for metric in chosen.metrics()]
        unknown = [name for name in names if name not in known]
    except ValueError:
        raise typer.BadParameter(
            f"--keep-last takes token counts, e.g. 0,512,2048; got {keep_last!r}"
        ) from None
    except ControlError as exc:
        raise typer.BadParameter(str(exc)) from None
    except LongreadError as exc:
        raise fail(exc) from None
    if unknown:
        listing = ", ".join(known)
        raise typer.BadParameter(f"{task} has no metric {', '.join(unknown)}; its metrics: {listing}")
    if any(plan.intact for plan in plans):
        raise typer.BadParameter("the intact run is always made: name only shuffle, replace or none")
    run_options = RunOptions(limit=limit, sample=sample, sample_seed=sample_seed, resume=True,
                             show_progress=not quiet)  # fmt: skip
    announce_plan(out / "context_use.json", target_effect, sample)
    announce = RunAnnouncer(out)

    try:
        with ray_for_command(ray, ray_workers) as on_ray:
            backend = backend_from_options(model, device=device, dtype=dtype, mode="shared", batch_size=8,
                                           prefill_chunk=512, threads=threads, max_length=max_length,
                                           ray=on_ray)  # fmt: skip
            files = run_ablation(lambda: make_task(task, settings), data, backend, out, plans, run_options,
                                 on_run=announce, metrics=names)  # fmt: skip
    except KeyboardInterrupt as interrupt:
        raise announce.interrupted(interrupt) from None
    except LongreadError as exc:
        raise fail(exc) from None
    show_report(files.markdown, (files.markdown, files.json_file, files.plot, files.html), files.failed)


def show_report(markdown: Path, written: tuple[Path, ...], failed: int) -> None:
    """Print the report and the files written; exit 1 when samples failed (their runs name them)."""
    typer.echo(markdown.read_text(encoding="utf-8"))
    for path in written:
        typer.echo(f"wrote {path}")
    if failed:
        typer.echo(f"{failed} sample(s) failed: each run's errors.jsonl names them", err=True)
        raise typer.Exit(code=1)
