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
from longread.cli.interrupts import interrupted_run
from longread.cli.options import (
    DeviceOption,
    DtypeOption,
    MaxLengthOption,
    ModelOption,
    QuietOption,
    TaskSettingOption,
    ThreadsOption,
    backend_from_options,
    fail,
    parse_task_options,
)
from longread.errors import LongreadError

ablate_app = typer.Typer()

KeepLastListOption = Annotated[
    str, typer.Option("--keep-last", help="Tokens kept intact, comma-separated (0: perturb everything).")
]
ControlsOption = Annotated[
    str, typer.Option("--controls", help="Context controls, comma-separated: shuffle, replace, none.")
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
    option: TaskSettingOption = None,
    sample: SampleOption = None,
    sample_seed: SampleSeedOption = 0,
    limit: LimitOption = None,
    device: DeviceOption = "cpu",
    dtype: DtypeOption = "float32",
    threads: ThreadsOption = None,
    max_length: MaxLengthOption = None,
    quiet: QuietOption = False,
) -> None:
    """Does the model use what it read? The intact run and each context control × K on the same samples,
    paired instance by instance: differences with 95% intervals, p-values, one sentence each, a plot."""
    from longread.evaluation.controls import ControlError, ControlledTask, ControlSettings
    from longread.evaluation.registry import make_task
    from longread.evaluation.runner import RunOptions, run_task
    from longread.report.context_use import write_context_use
    from longread.report.html import build_html_report
    from longread.runs.run_dir import SAMPLES_FILE

    settings = parse_task_options(option or [])
    try:
        keeps = [int(k) for k in parse_list(keep_last, "K")]
        kinds: list[Any] = parse_list(controls, "control")
        plans = [ControlSettings(kind, keep, sample_seed) for kind in kinds for keep in keeps]
    except ValueError:
        raise typer.BadParameter(
            f"--keep-last takes token counts, e.g. 0,512,2048; got {keep_last!r}"
        ) from None
    except ControlError as exc:
        raise typer.BadParameter(str(exc)) from None
    if any(plan.intact for plan in plans):
        raise typer.BadParameter("the intact run is always made: name only shuffle, replace or none")
    run_options = RunOptions(limit=limit, sample=sample, sample_seed=sample_seed, resume=True,
                             show_progress=not quiet)  # fmt: skip
    runs: list[tuple[str, Any, Path]] = [("intact", None, out / "intact")]
    runs += [(f"{p.kind} beyond the last {p.keep_last}", p, out / f"{p.kind}-k{p.keep_last}") for p in plans]
    current = out
    try:
        tasks = [
            (name, _task(make_task(task, settings), plan, ControlledTask), path) for name, plan, path in runs
        ]
        backend = backend_from_options(model, device=device, dtype=dtype, mode="shared", batch_size=8,
                                       prefill_chunk=512, threads=threads, max_length=max_length)  # fmt: skip
        for index, (name, chosen, path) in enumerate(tasks, start=1):
            current = path
            typer.echo(f"[{index}/{len(tasks)}] {name}: {path}", err=True)
            outcome = run_task(chosen, data, backend, path, run_options)
            if outcome.errors:
                typer.echo(f"  {len(outcome.errors)} sample(s) failed (see {path}/errors.jsonl)", err=True)
        files = write_context_use(out / "intact", [path for _, _, path in tasks[1:]], out)
        page = build_html_report([path for _, _, path in tasks], out / "html")
    except KeyboardInterrupt as interrupt:
        raise interrupted_run(interrupt, current, current / SAMPLES_FILE) from None
    except LongreadError as exc:
        raise fail(exc) from None
    typer.echo(files[0].read_text(encoding="utf-8"))
    for path in [*files, page]:
        typer.echo(f"wrote {path}")


def _task(task: Any, plan: Any, wrapper: Any) -> Any:
    return task if plan is None else wrapper(task, plan)
