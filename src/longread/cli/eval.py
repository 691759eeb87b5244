"""``longread eval``: one task, one model, every sample logged, results with 95% intervals.

The command reads its options, then hands over to three helpers: the task's settings from
``-o KEY=VALUE`` and the shorthands (:func:`task_settings`), the run itself (:func:`run_eval`:
task, model, runner, report) and what is printed at the end (:func:`echo_outcome`). A new option
is one more parameter of :func:`eval_command` passed on to the one place that uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from longread.cli.interrupts import interrupted_run
from longread.cli.options import (
    DEFAULT_PREFILL_CHUNK,
    BatchSizeOption,
    DeviceOption,
    DtypeOption,
    MaxLengthOption,
    ModelOption,
    ModeOption,
    PrefillChunkOption,
    PressOption,
    QuietOption,
    RayOption,
    RayWorkersOption,
    TaskSettingOption,
    ThreadsOption,
    backend_from_options,
    fail,
    parse_lengths,
    parse_task_options,
    press_from_options,
    ray_for_command,
)
from longread.cli.report import echo_plots
from longread.errors import LongreadError
from longread.evaluation.recheck import DEFAULT_RECHECK

if TYPE_CHECKING:
    from longread.evaluation.controls import ControlSettings
    from longread.evaluation.runner import RunOptions, RunOutcome
    from longread.report.build import ReportFiles

eval_app = typer.Typer()

TaskArgument = Annotated[
    str, typer.Argument(help="A registered task (see `longread tasks`), e.g. chapterbreak.")
]
DataOption = Annotated[
    Path,
    typer.Option(
        "--data",
        help="The task's data: a file (ChapterBreak JSONL), a directory (NarrativeXL build) or a "
        "`longread export chapterbreak --to hf` folder.",
    ),
]
RunOutOption = Annotated[
    Path, typer.Option("--out", help="Run directory (config.json, samples.jsonl, results.json).")
]
PrefixLengthsOption = Annotated[
    str | None,
    typer.Option(
        help="Shorthand for -o prefix_lengths=…: prefix lengths in the model's tokens, comma-separated."
    ),
]
SuffixTokensOption = Annotated[
    int | None,
    typer.Option(help="Shorthand for -o suffix_tokens=N: candidates are cut to N model tokens."),
]
TruncateOption = Annotated[
    bool | None,
    typer.Option(help="Cut prompts that exceed the model window (--no-truncate: fail instead)."),
]
OptionsOnlyOption = Annotated[
    bool,
    typer.Option(
        "--options-only",
        help="Shorthand for -o options_only=true: the baseline that shows the model no document "
        "(NarrativeXL), only the question and its options.",
    ),
]
ScoringOption = Annotated[
    str | None, typer.Option(help="Shorthand for -o scoring=…: mean (log-prob per token) or sum.")
]
WindowOption = Annotated[
    int | None, typer.Option(help="Shorthand for -o window=N: NarrativeXL's reading window in book tokens.")
]
StrideOption = Annotated[
    int | None,
    typer.Option(help="Shorthand for -o stride=N: how far the full reading window moves (default W/2)."),
]
SaveInputsOption = Annotated[
    bool,
    typer.Option(
        "--save-inputs",
        help="Write the token ids each request sent to the model to inputs.jsonl.gz beside samples.jsonl.",
    ),
]
ContextOption = Annotated[
    str | None,
    typer.Option(
        "--context",
        help="Context control (also -o context=…): intact (default), or shuffle / replace / none for the "
        "document beyond its last --keep-last tokens — permuted, replaced by another book's tokens, or "
        "dropped. Paired with the intact run by sample key (`longread report INTACT CONTROLLED`). A "
        "read-along task (narrativexl) reads each window again under a control: give `--context intact` "
        "for its intact run to read the same way.",
        show_default=False,
    ),
]
KeepLastOption = Annotated[
    int | None,
    typer.Option(
        "--keep-last",
        help="Tokens at the end of the document a context control leaves as they are (also -o keep_last=K; "
        "default 0: perturb everything).",
        show_default=False,
    ),
]
LimitOption = Annotated[int | None, typer.Option(help="Evaluate only the first N instances.")]
SampleOption = Annotated[int | None, typer.Option(help="Evaluate a seeded N instances, stratified by book.")]
SampleSeedOption = Annotated[int, typer.Option(help="Seed of --sample.")]
ResumeOption = Annotated[
    bool, typer.Option(help="Continue the run in --out: nothing finished is redone, failures are retried.")
]
OverwriteOption = Annotated[bool, typer.Option(help="Delete the run in --out and start again.")]
RecheckOption = Annotated[
    int,
    typer.Option(
        help="On --resume, re-score N finished samples and report those that differ past the "
        "log-prob tolerance (threads, batch sizes may differ between sessions); 0: none.",
    ),
]
SameSamplesAsOption = Annotated[
    Path | None,
    typer.Option(
        help="Evaluate exactly the instances (matched by pair id) that the run in this directory "
        "evaluated, so the two runs compare pair by pair.",
    ),
]
BooksListOption = Annotated[
    Path | None, typer.Option(help="Evaluate only the books this file names (one book id a line).")
]
RequestBatchOption = Annotated[
    int | None, typer.Option(help="Requests sent to the model in one call (default: the model's choice).")
]


@eval_app.command("eval")
def eval_command(
    task: TaskArgument,
    data: DataOption,
    model: ModelOption,
    out: RunOutOption,
    option: TaskSettingOption = None,
    prefix_lengths: PrefixLengthsOption = None,
    suffix_tokens: SuffixTokensOption = None,
    truncate: TruncateOption = None,
    options_only: OptionsOnlyOption = False,
    scoring: ScoringOption = None,
    window: WindowOption = None,
    stride: StrideOption = None,
    limit: LimitOption = None,
    sample: SampleOption = None,
    sample_seed: SampleSeedOption = 0,
    resume: ResumeOption = False,
    overwrite: OverwriteOption = False,
    request_batch: RequestBatchOption = None,
    mode: ModeOption = "shared",
    batch_size: BatchSizeOption = 8,
    prefill_chunk: PrefillChunkOption = DEFAULT_PREFILL_CHUNK,
    dtype: DtypeOption = "float32",
    device: DeviceOption = "cpu",
    threads: ThreadsOption = None,
    max_length: MaxLengthOption = None,
    quiet: QuietOption = False,
    ray: RayOption = None,
    ray_workers: RayWorkersOption = None,
    recheck: RecheckOption = DEFAULT_RECHECK,
    same_samples_as: SameSamplesAsOption = None,
    books_list: BooksListOption = None,
    context: ContextOption = None,
    keep_last: KeepLastOption = None,
    save_inputs: SaveInputsOption = False,
    press: PressOption = None,
) -> None:
    """Evaluate a model on a task: every sample logged, results per x-axis value with 95% intervals."""
    from longread.evaluation.runner import RunOptions

    settings = task_settings(
        option or [],
        prefix_lengths=prefix_lengths,
        suffix_tokens=suffix_tokens,
        truncate=truncate,
        options_only=options_only,
        scoring=scoring,
        window=window,
        stride=stride,
    )
    asked_intact = (context if context is not None else settings.get("context")) == "intact"
    control = control_settings(settings, context, keep_last, sample_seed)
    pressed = press_from_options(press, settings)
    run_options = RunOptions(
        limit=limit,
        sample=sample,
        sample_seed=sample_seed,
        resume=resume,
        overwrite=overwrite,
        request_batch=request_batch,
        show_progress=not quiet,
        recheck=recheck,
        books_list=books_list,
        same_samples_as=same_samples_as,
        save_inputs=save_inputs,
    )
    try:
        with ray_for_command(ray, ray_workers) as on_ray:
            load_backend = partial(backend_from_options, model, device=device, dtype=dtype, mode=mode,
                                   batch_size=batch_size, prefill_chunk=prefill_chunk, threads=threads,
                                   max_length=max_length, ray=on_ray, press=pressed)  # fmt: skip
            outcome, files = run_eval(task, settings, data, out, load_backend, run_options, control,
                                      cut_left_intact=asked_intact, press=pressed)  # fmt: skip
    except KeyboardInterrupt as interrupt:  # Ctrl-C, SIGTERM, SIGHUP: Ray is stopped by now
        from longread.runs.layout import SAMPLES_FILE

        raise interrupted_run(interrupt, out, out / SAMPLES_FILE) from None
    echo_outcome(outcome, files, out)


def task_settings(
    pairs: Sequence[str],
    *,
    prefix_lengths: str | None,
    suffix_tokens: int | None,
    truncate: bool | None,
    options_only: bool,
    scoring: str | None,
    window: int | None,
    stride: int | None,
) -> dict[str, str]:
    """The task's settings: ``-o KEY=VALUE`` pairs, then the shorthand options given (they win)."""
    settings = parse_task_options(pairs)
    if prefix_lengths is not None:
        settings["prefix_lengths"] = ",".join(map(str, parse_lengths(prefix_lengths)))
    if suffix_tokens is not None:
        settings["suffix_tokens"] = str(suffix_tokens)
    if truncate is not None:
        settings["truncate"] = str(truncate).lower()
    if options_only:
        settings["options_only"] = "true"
    for key, value in (("scoring", scoring), ("window", window), ("stride", stride)):
        if value is not None:
            settings[key] = str(value)
    return settings


def control_settings(
    settings: dict[str, str], context: str | None, keep_last: int | None, seed: int
) -> ControlSettings:
    """The context control from ``--context`` / ``--keep-last`` or ``-o context=… -o keep_last=K`` (taken
    out of the task's settings: the control is the runner's, for every task); seeded by ``--sample-seed``."""
    from longread.evaluation.controls import ControlError, ControlSettings

    kind = context if context is not None else settings.pop("context", "intact")
    settings.pop("context", None)
    keep_text = settings.pop("keep_last", None)
    try:
        keep = keep_last if keep_last is not None else int(keep_text) if keep_text is not None else None
    except ValueError:
        raise typer.BadParameter(f"keep_last must be a number of tokens, got {keep_text!r}") from None
    if kind == "intact" and keep is not None:
        raise typer.BadParameter(
            "--keep-last applies to a context control: add --context shuffle, replace or none"
        )
    try:
        return ControlSettings(kind, keep or 0, seed)  # type: ignore[arg-type]
    except ControlError as exc:
        raise typer.BadParameter(str(exc)) from None


def run_eval(
    task: str,
    settings: dict[str, str],
    data: Path,
    out: Path,
    load_backend: Callable[[], Any],
    options: RunOptions,
    control: ControlSettings | None = None,
    *,
    cut_left_intact: bool = False,
    press: Any = None,
) -> tuple[RunOutcome, ReportFiles]:
    """Make the task, load the model, run every sample into ``out`` and write its report; an error is
    printed with what to do, and the command exits with code 2. ``cut_left_intact`` (``--context intact``
    given): a read-along task reads intact as its controlled runs read, each window cut from the left."""
    from longread.evaluation.controls import ControlledTask, reads_along
    from longread.evaluation.registry import make_task
    from longread.evaluation.runner import run_task
    from longread.models.errors import FatalBackendError
    from longread.report.build import build_report

    try:
        chosen: Any = make_task(task, settings)  # a Task, or a ControlledTask wrapping one
        if press is not None and reads_along(chosen):
            from longread.models.press_spec import PressError

            raise PressError(
                f"press {press}: {task} reads each book along in chunks on one growing cache, and kvpress "
                "compresses only a prefill from position 0; press the NarrativeXL summaries task instead"
            )
        if control is not None and (not control.intact or (cut_left_intact and reads_along(chosen))):
            chosen = ControlledTask(chosen, control)
        outcome = run_task(chosen, data, load_backend(), out, options)
        files = build_report([out], out, group_by=getattr(chosen, "report_group_by", ()))
    except FatalBackendError as exc:
        typer.echo(
            f"error: {exc}\nThe run stopped; every finished sample is kept in {out}. "
            f"Fix the cause, then run the same command with --resume.",
            err=True,
        )
        raise typer.Exit(code=2) from None
    except LongreadError as exc:
        raise fail(exc) from None
    return outcome, files


def echo_outcome(outcome: RunOutcome, files: ReportFiles, out: Path) -> None:
    """What was scored, the table and plots, then what went wrong (exit code 1 if a sample failed or an
    item of the data could not be read)."""
    from longread.evaluation.runner import selection_lines

    typer.echo(
        f"{outcome.request_kind}: scored {outcome.scored} samples ({outcome.reused} reused from a "
        f"shorter context that held the whole prefix, {outcome.skipped_done} samples already done) "
        f"→ {out}"
    )
    typer.echo(files.table)
    echo_plots(files)
    _echo_listing(
        f"{len(outcome.input_problems)} item(s) of the data could not be read and were left out "
        f"(listed in {out}/results.json under input_problems):",
        outcome.input_problems,
    )
    _echo_listing(
        f"{len(outcome.errors)} sample(s) failed (logged in {out}/errors.jsonl; --resume retries them):",
        [f"{key}: {message}" for key, message in outcome.errors],
    )
    _echo_listing(
        f"{len(outcome.incidents)} incident(s) while answering (kept in {out}/incidents.jsonl):",
        outcome.incidents,
    )
    for line in selection_lines(outcome) + (outcome.recheck.lines() if outcome.recheck else []):
        typer.echo(line)
    if outcome.errors or outcome.input_problems:
        raise typer.Exit(code=1)


def _echo_listing(title: str, lines: Sequence[str]) -> None:
    """``title`` and the ``lines`` indented below it; nothing when there are no lines."""
    if lines:
        typer.echo(title)
        for line in lines:
            typer.echo(f"  {line}")
