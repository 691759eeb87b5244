"""``longread eval``: one task, one model, every sample logged, results with 95% intervals."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from longread.cli.options import (
    DEFAULT_PREFILL_CHUNK,
    BatchSizeOption,
    DeviceOption,
    DtypeOption,
    MaxLengthOption,
    ModelOption,
    ModeOption,
    PrefillChunkOption,
    RayOption,
    RayWorkersOption,
    ThreadsOption,
    backend_from_options,
    fail,
    parse_lengths,
    ray_from_options,
)
from longread.errors import LongreadError
from longread.evaluation.recheck import DEFAULT_RECHECK
from longread.evaluation.runner import selection_lines


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_command(
        task: Annotated[
            str, typer.Argument(help="A registered task (see `longread tasks`), e.g. chapterbreak.")
        ],
        data: Annotated[
            Path,
            typer.Option(
                "--data",
                help="The task's data: a file (ChapterBreak JSONL) or a directory (NarrativeXL build).",
            ),
        ],
        model: ModelOption,
        out: Annotated[
            Path, typer.Option("--out", help="Run directory (config.json, samples.jsonl, results.json).")
        ],
        option: Annotated[
            list[str] | None,
            typer.Option(
                "--option", "-o", help="A task setting as KEY=VALUE (repeat); `longread tasks` lists them."
            ),
        ] = None,
        prefix_lengths: Annotated[
            str | None,
            typer.Option(
                help="Shorthand for -o prefix_lengths=…: prefix lengths in the model's tokens, "
                "comma-separated."
            ),
        ] = None,
        suffix_tokens: Annotated[
            int | None,
            typer.Option(help="Shorthand for -o suffix_tokens=N: candidates are cut to N model tokens."),
        ] = None,
        truncate: Annotated[
            bool | None,
            typer.Option(help="Cut prompts that exceed the model window (--no-truncate: fail instead)."),
        ] = None,
        options_only: Annotated[
            bool,
            typer.Option(
                "--options-only",
                help="Shorthand for -o options_only=true: the baseline that shows the model no document "
                "(NarrativeXL), only the question and its options.",
            ),
        ] = False,
        scoring: Annotated[
            str | None,
            typer.Option(help="Shorthand for -o scoring=…: mean (log-prob per token) or sum."),
        ] = None,
        window: Annotated[
            int | None,
            typer.Option(help="Shorthand for -o window=N: NarrativeXL's reading window in book tokens."),
        ] = None,
        stride: Annotated[
            int | None,
            typer.Option(
                help="Shorthand for -o stride=N: how far the full reading window moves (default W/2)."
            ),
        ] = None,
        limit: Annotated[int | None, typer.Option(help="Evaluate only the first N instances.")] = None,
        sample: Annotated[
            int | None, typer.Option(help="Evaluate a seeded N instances, stratified by book.")
        ] = None,
        sample_seed: Annotated[int, typer.Option(help="Seed of --sample.")] = 0,
        resume: Annotated[
            bool,
            typer.Option(help="Continue the run in --out: nothing finished is redone, failures are retried."),
        ] = False,
        overwrite: Annotated[bool, typer.Option(help="Delete the run in --out and start again.")] = False,
        request_batch: Annotated[
            int | None,
            typer.Option(help="Requests sent to the model in one call (default: the model's choice)."),
        ] = None,
        mode: ModeOption = "shared",
        batch_size: BatchSizeOption = 8,
        prefill_chunk: PrefillChunkOption = DEFAULT_PREFILL_CHUNK,
        dtype: DtypeOption = "float32",
        device: DeviceOption = "cpu",
        threads: ThreadsOption = None,
        max_length: MaxLengthOption = None,
        quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
        ray: RayOption = None,
        ray_workers: RayWorkersOption = None,
        recheck: Annotated[
            int,
            typer.Option(
                help="On --resume, re-score N finished samples and report those that differ past the "
                "log-prob tolerance (threads, batch sizes may differ between sessions); 0: none.",
            ),
        ] = DEFAULT_RECHECK,
        same_samples_as: Annotated[
            Path | None,
            typer.Option(
                help="Evaluate exactly the instances (matched by pair id) that the run in this directory "
                "evaluated, so the two runs compare pair by pair.",
            ),
        ] = None,
        books_list: Annotated[
            Path | None,
            typer.Option(help="Evaluate only the books this file names (one book id a line)."),
        ] = None,
    ) -> None:
        """Evaluate a model on a task: every sample logged, results per x-axis value with 95% intervals."""
        from longread.evaluation.registry import make_task
        from longread.evaluation.runner import RunOptions, run_task
        from longread.models.errors import FatalBackendError
        from longread.report.build import build_report

        settings = _parse_task_options(option or [])
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
        on_ray = ray_from_options(ray, ray_workers)
        try:
            chosen = make_task(task, settings)
            backend = backend_from_options(
                model,
                device=device,
                dtype=dtype,
                mode=mode,
                batch_size=batch_size,
                prefill_chunk=prefill_chunk,
                threads=threads,
                max_length=max_length,
                ray=on_ray,
            )
            options = RunOptions(
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
            )
            outcome = run_task(chosen, data, backend, out, options)
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
        finally:
            if on_ray is not None:
                from longread.scaleout.ray_session import stop_ray

                stop_ray()
        typer.echo(
            f"{outcome.request_kind}: scored {outcome.scored} samples ({outcome.reused} reused from a "
            f"shorter context that held the whole prefix, {outcome.skipped_done} samples already done) "
            f"→ {out}"
        )
        typer.echo(files.table)
        typer.echo(f"plot: {files.plot}")
        for extra in (files.grouped_plot, files.every_metric_plot):
            if extra is not None:
                typer.echo(f"plot: {extra}")
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


def _parse_task_options(pairs: list[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(
                f"{pair!r}: write KEY=VALUE, e.g. -o suffix_tokens=64", param_hint="--option"
            )
        options[key.strip().replace("-", "_")] = value.strip()
    return options


def _echo_listing(title: str, lines: Sequence[str]) -> None:
    """``title`` and the ``lines`` indented below it; nothing when there are no lines."""
    if lines:
        typer.echo(title)
        for line in lines:
            typer.echo(f"  {line}")
