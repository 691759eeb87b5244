"""The one evaluation loop: every task runs through :func:`run_task`.

It owns what is generic: choosing instances, sample keys, resume (nothing
finished is redone; failed samples are retried), per-sample errors that do not
end the run, progress with rate and ETA, token accounting, reuse of a result
whose context was not cut, batching of pending requests, and the atomic,
deterministic ``results.json``.

Batching works in *waves* over a chunk of instances (:mod:`.waves`); what a run
did is a :class:`~.outcome.RunOutcome`; re-scoring on resume is :mod:`.recheck`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longread.errors import LongreadError
from longread.evaluation.dispatch import choose_request_kind
from longread.evaluation.outcome import OnRow, RunOutcome
from longread.evaluation.recheck import RecheckReport, recheck_rows
from longread.evaluation.results import summarise_rows
from longread.evaluation.rows import read_typed_rows
from longread.evaluation.selection import (
    SAMPLING_RULE,
    FixedSelection,
    SelectionError,
    keep_books,
    same_samples,
    select,
)
from longread.evaluation.task import Sample, Task
from longread.evaluation.waves import run_chunk
from longread.progress import Progress
from longread.runs.config import make_run_config
from longread.runs.run_dir import RunDir
from longread.runs.software import software

__all__ = ["OnRow", "RunOptions", "RunOutcome", "run_task", "selection_lines"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunOptions:
    """What to run and how; none of it changes a sample's result (so none of it is hashed)."""

    limit: int | None = None
    """Only the first N instances (after ``sample``)."""
    sample: int | None = None
    """A seeded N instances, stratified by book."""
    sample_seed: int = 0
    resume: bool = False
    overwrite: bool = False
    request_batch: int | None = None
    """Requests per backend call; default: the backend's ``preferred_batch`` or 1."""
    show_progress: bool = True
    recheck: int = 0
    """On resume, re-score this many finished samples and report those that differ past the log-prob
    tolerance (:mod:`longread.evaluation.recheck`; the command line's ``--recheck`` defaults to 2)."""
    books_list: Path | None = None
    """Only the books this file names (one id a line), before ``sample`` and ``limit``."""
    same_samples_as: Path | None = None
    """Exactly the instances (by pair id) the run in this directory evaluated, before ``limit``."""
    save_inputs: bool = False
    """Write the token ids each request sent to the model to ``inputs.jsonl.gz`` (``--save-inputs``)."""

    def runtime(self) -> dict[str, Any]:
        facts: dict[str, Any] = {
            "limit": self.limit,
            "sample": self.sample,
            "sample_seed": self.sample_seed,
            "sampling": SAMPLING_RULE if self.sample is not None else None,
        }
        # Recorded only when used, so the runtime of runs that do not use them reads as before.
        extra = {
            "request_batch": self.request_batch,
            "recheck": self.recheck or None,
            "books_list": str(self.books_list) if self.books_list else None,
            "same_samples_as": str(self.same_samples_as) if self.same_samples_as else None,
            "save_inputs": True if self.save_inputs else None,
        }
        return {**facts, **{key: value for key, value in extra.items() if value is not None}}


def run_task(
    task: Task[Any, Any],
    data: Path,
    backend: Any,
    run_path: Path,
    options: RunOptions = RunOptions(),
    *,
    on_row: OnRow | None = None,
) -> RunOutcome:
    """Evaluate ``backend`` on ``task``'s instances in ``data``, appending each finished sample to the run."""
    kind = choose_request_kind(task.name, task.request_kinds, backend)
    instances = task.load(data)
    # Lines of the data the task could not read (named by file and line): the run goes on without them
    # and they are reported at the end and in results.json.
    input_problems = [str(problem) for problem in getattr(task, "input_problems", list)()]
    if not instances:
        listing = "".join(f"\n  {problem}" for problem in input_problems[:20])
        raise LongreadError(f"{data}: no instances to evaluate{listing}")
    chosen, fixed = _choose([task.samples(instance) for instance in instances], options)
    model = backend.describe()
    config = make_run_config(
        task=task.name,
        model=model,
        data_path=data,
        settings=task.settings.model_dump(mode="json"),
        # How the backend was reached (a served model's address, concurrency …) is recorded, not hashed.
        runtime={**options.runtime(), **_backend_runtime(backend), "software": software()},
    )
    outcome = RunOutcome(
        run_dir=run_path,
        results={},
        request_kind=kind,
        instances=len(chosen),
        input_problems=input_problems,
        selection=fixed,
    )
    wanted = {sample.key for samples in chosen for sample in samples}
    if len(wanted) != sum(len(samples) for samples in chosen):
        raise LongreadError(f"{data}: two samples share a key — are instance ids unique in this file?")
    batch = max(1, options.request_batch or int(getattr(backend, "preferred_batch", 1)))
    with RunDir.create(run_path, config, resume=options.resume, overwrite=options.overwrite) as run:
        if options.save_inputs:
            run.save_inputs()
        done = run.done_keys()
        pending = [[s for s in samples if s.key not in done] for samples in chosen]
        pending = [samples for samples in pending if samples]
        outcome.skipped_done = len(wanted & done)
        with Progress(
            total=len(wanted),
            desc=f"{task.name} {model.get('name', '')}",
            unit="sample",
            initial=outcome.skipped_done,
            enabled=options.show_progress,
        ) as progress:
            for start in range(0, len(pending), batch):
                run_chunk(
                    task, kind, backend, run, pending[start : start + batch], batch, outcome, progress, on_row
                )
        if fixed is not None:
            run.note_session("selection", fixed.as_dict())
        if run.resumed and options.recheck > 0:
            outcome.recheck = _recheck(task, kind, backend, run, chosen, done, options.recheck)
        rows = [row for row in read_typed_rows(run.path, task.row_model) if row.key in wanted]
        outcome.results = summarise_rows(task, rows, str(model.get("name", "model")))
        if input_problems:
            outcome.results["input_problems"] = input_problems
        run.write_selection(wanted, pair_ids={_pair_of(samples) for samples in chosen})
        run.write_results(outcome.results)
    return outcome


def selection_lines(outcome: RunOutcome) -> list[str]:
    """What a fixed selection took and what the data lacked of it, to print."""
    fixed = outcome.selection
    if fixed is None:
        return []
    lines = [f"selection ({fixed.source}): {outcome.instances} instance(s) of {fixed.wanted} asked for"]
    if fixed.unmatched:
        shown = ", ".join(fixed.unmatched[:10]) + (" …" if len(fixed.unmatched) > 10 else "")
        lines.append(f"  {len(fixed.unmatched)} of them are not in this data (pair ids): {shown}")
    return lines


def _pair_of(samples: Sequence[Sample[Any]]) -> str:
    first = samples[0]
    return first.pair_id if first.pair_id is not None else first.instance_id


def _choose(
    samples_by_instance: list[list[Sample[Any]]], options: RunOptions
) -> tuple[list[list[Sample[Any]]], FixedSelection | None]:
    """The instances (as their samples) the run evaluates: a fixed selection first, then sample, limit."""
    items = [samples for samples in samples_by_instance if samples]
    fixed: FixedSelection | None = None
    if options.same_samples_as is not None:
        if options.sample is not None or options.books_list is not None:
            raise SelectionError(
                "--same-samples-as takes the earlier run's instances: drop --sample and --books-list"
            )
        items, fixed = same_samples(items, options.same_samples_as, _pair_of)
    elif options.books_list is not None:
        items, fixed = keep_books(items, options.books_list, lambda samples: samples[0].group)
    chosen = select(
        items,
        limit=options.limit,
        sample=options.sample,
        seed=options.sample_seed,
        group_of=lambda samples: samples[0].group,
        id_of=_pair_of,
    )
    return chosen, fixed


def _recheck(
    task: Task[Any, Any],
    kind: str,
    backend: Any,
    run: RunDir,
    chosen: Sequence[Sequence[Sample[Any]]],
    done_before: set[str],
    count: int,
) -> RecheckReport:
    """Re-score ``count`` samples finished in an earlier session (the first by key) and store the report."""
    earlier = sorted(
        (sample for samples in chosen for sample in samples if sample.key in done_before),
        key=lambda sample: sample.key,
    )[:count]
    stored = {str(row["key"]): row for row in run.rows()}
    report = recheck_rows(task, kind, backend, earlier, stored)
    run.note_session("recheck", report.as_dict())
    return report


def _backend_runtime(backend: Any) -> dict[str, Any]:
    facts = getattr(backend, "runtime_facts", None)
    return {"backend": dict(facts())} if callable(facts) else {}
