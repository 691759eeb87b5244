"""An ablation: the intact run and each context control × K on the same samples, then the context-use
report. What ``longread ablate`` and ``make demo-context`` run.

A task that reads along (NarrativeXL) has its intact run read as its controlled runs are — each
question's window cut from the left, nothing perturbed — so every difference is the control's alone
(:func:`~longread.evaluation.controls.reads_along`).

Runs go to ``out/intact``, ``out/<control>-k<K>`` (each resumable: what is finished is kept, an intact
run already there is reused); the model is loaded once by the caller. The report is
:mod:`longread.report.context_use` plus the HTML page of every run (``out/html/index.html``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longread.evaluation.controls import ControlledTask, ControlSettings, reads_along
from longread.evaluation.runner import RunOptions, run_task
from longread.report.context_use import write_context_use
from longread.report.html import build_html_report


@dataclass(frozen=True)
class AblationFiles:
    runs: tuple[Path, ...]
    """The intact run first, then one per control × K."""
    markdown: Path
    json_file: Path
    plot: Path
    html: Path
    failed: int
    """Samples that failed over all runs (each run's errors.jsonl names them)."""


def run_dir_name(plan: ControlSettings) -> str:
    return "intact" if plan.intact else f"{plan.kind}-k{plan.keep_last}"


def run_ablation(
    make: Callable[[], Any],
    data: Path,
    backend: Any,
    out: Path,
    plans: Sequence[ControlSettings],
    options: RunOptions,
    *,
    on_run: Callable[[int, int, str, Path], None] | None = None,
    metrics: Sequence[str] = (),
) -> AblationFiles:
    """``make()`` gives a fresh task; ``plans`` are the controls (the intact run is always made first);
    ``metrics``: the task's metrics the report compares (default: the primary one)."""
    intact = ControlSettings()
    chosen = [intact, *(plan for plan in plans if not plan.intact)]
    paths: list[Path] = []
    failed = 0
    for index, plan in enumerate(chosen, start=1):
        path = out / run_dir_name(plan)
        if on_run is not None:
            on_run(index, len(chosen), run_dir_name(plan), path)
        task: Any = make()
        if not plan.intact or reads_along(task):  # a read-along's intact run reads cut-left, as controls do
            task = ControlledTask(task, plan)
        outcome = run_task(task, data, backend, path, options)
        failed += len(outcome.errors)
        paths.append(path)
    markdown, json_file, plot = write_context_use(paths[0], paths[1:], out, metrics)
    html = build_html_report(paths, out / "html")
    return AblationFiles(tuple(paths), markdown, json_file, plot, html, failed)
