"""The one evaluation loop: every task runs through :func:`run_task`.

It owns what is generic: choosing instances, sample keys, resume (nothing
finished is redone; failed samples are retried), per-sample errors that do not
end the run, progress with rate and ETA, token accounting, reuse of a result
whose context was not cut, batching of pending requests, and the atomic,
deterministic ``results.json``.

Batching works in *waves* over a chunk of instances: each wave sends, for every
reuse group still open, its next pending sample (the smallest context budget);
a result whose context was not cut answers the group's larger budgets too.
Requests of one wave go to the backend in one call, so a batching backend (a
served model, generation) gets many requests at once while reuse stays exact.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longread.errors import LongreadError
from longread.evaluation.dispatch import ask, choose_request_kind, context_was_cut, tokens_of
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
from longread.evaluation.task import Sample, SampleRow, Task
from longread.models.errors import FatalBackendError
from longread.models.requests.groups import RequestGroup
from longread.progress import Progress
from longread.runs.config import make_run_config
from longread.runs.errors import RunWriteError
from longread.runs.run_dir import RunDir

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
        }
        return {**facts, **{key: value for key, value in extra.items() if value is not None}}


@dataclass
class RunOutcome:
    run_dir: Path
    results: dict[str, Any]
    request_kind: str
    scored: int = 0
    reused: int = 0
    skipped_done: int = 0
    instances: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)
    input_problems: list[str] = field(default_factory=list)
    """Items of the data that could not be read (bad lines), each naming its file and line."""
    incidents: list[str] = field(default_factory=list)
    """What happened to the backend's machinery while samples were answered (a Ray replica died and its
    requests were asked again), as the backend told it; also in the run's ``incidents.jsonl``."""
    recheck: RecheckReport | None = None
    """On resume: what re-scoring finished samples found (also in ``config.json``'s ``sessions``)."""
    selection: FixedSelection | None = None
    """A fixed selection (``books_list``, ``same_samples_as``): what it asked for and what the data lacked."""


OnRow = Callable[[SampleRow], None]


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
        runtime={**options.runtime(), **_backend_runtime(backend)},
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
                _run_chunk(
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


def _run_chunk(
    task: Task[Any, Any],
    kind: str,
    backend: Any,
    run: RunDir,
    chunk: Sequence[Sequence[Sample[Any]]],
    batch: int,
    outcome: RunOutcome,
    progress: Progress,
    on_row: OnRow | None,
) -> None:
    queues: list[deque[Sample[Any]]] = []
    for samples in chunk:
        groups: dict[object, list[Sample[Any]]] = {}
        for sample in samples:
            # A sample without a reuse group is its own group.
            groups.setdefault(
                sample.reuse_group if sample.reuse_group is not None else id(sample), []
            ).append(sample)
        for members in groups.values():
            members.sort(key=lambda s: (s.context_budget is None, s.context_budget or 0))
            queues.append(deque(members))
    while queues:
        wave = [(queue.popleft(), queue) for queue in queues]
        still_open: list[deque[Sample[Any]]] = []
        # One backend call per part of the wave, and its rows stored before the next call: a long wave
        # (a NarrativeXL book's questions) never holds finished work in memory only.
        for start in range(0, len(wave), batch):
            part = wave[start : start + batch]
            queue_of = {sample.key: queue for sample, queue in part}
            for asked, answers in _answer(
                task, kind, backend, [sample for sample, _ in part], batch, outcome, run
            ):
                for sample in asked:
                    queue = queue_of[sample.key]
                    result = answers.get(sample.key)
                    if result is not None:
                        _store(task, kind, run, sample, result, False, outcome, progress, on_row)
                        if queue and sample.reuse_group is not None and context_was_cut(result) is False:
                            # The whole context fitted: a larger budget would send the very same request.
                            while queue:
                                _store(
                                    task, kind, run, queue.popleft(), result, True, outcome, progress, on_row
                                )
                    else:
                        progress.update(items=1, tokens=0)
                    if queue:
                        still_open.append(queue)
        queues = still_open


def _answer(
    task: Task[Any, Any],
    kind: str,
    backend: Any,
    wave: Sequence[Sample[Any]],
    batch: int,
    outcome: RunOutcome,
    run: RunDir,
) -> Iterator[tuple[list[Sample[Any]], dict[str, Any]]]:
    """(samples asked, their results by key) per backend call; a failing sample is logged and left out."""
    requests: list[tuple[Sample[Any], Any]] = []
    unasked: list[Sample[Any]] = []
    for sample in wave:
        try:
            requests.append((sample, task.request(sample, kind)))
        except Exception as exc:
            _record_error(run, outcome, sample, exc)
            unasked.append(sample)
    if unasked:
        yield unasked, {}
    for part in _by_weight(requests, batch):
        answers: dict[str, Any] = {}
        try:
            results = ask(backend, kind, [request for _, request in part], None)
        except (RunWriteError, FatalBackendError):
            _note_incidents(backend, run, outcome, part)
            raise
        except Exception as exc:
            _note_incidents(backend, run, outcome, part)
            if len(part) == 1:
                _record_error(run, outcome, part[0][0], exc)
                yield [part[0][0]], answers
                continue
            # One bad request must not fail its neighbours: ask again one at a time to find it.
            logger.info("a batch of %d %s requests failed (%s); retrying one by one", len(part), kind, exc)
            results = []
            for sample, request in part:
                try:
                    results.append(ask(backend, kind, [request], None)[0])
                except (RunWriteError, FatalBackendError):
                    raise
                except Exception as single:
                    _record_error(run, outcome, sample, single)
                    results.append(None)
                finally:
                    _note_incidents(backend, run, outcome, [(sample, request)])
        else:
            _note_incidents(backend, run, outcome, part)
        for (sample, _), result in zip(part, results, strict=True):
            if result is not None:
                answers[sample.key] = result
        yield [sample for sample, _ in part], answers


def _note_incidents(
    backend: Any, run: RunDir, outcome: RunOutcome, part: Sequence[tuple[Sample[Any], Any]]
) -> None:
    """Store what the backend says happened during the call that asked for ``part`` (a backend with
    ``take_incidents()``: the Ray replicas), naming the samples whose requests it touched."""
    take = getattr(backend, "take_incidents", None)
    if not callable(take):
        return
    # The backend saw request groups flattened into their parts: index → the sample that asked.
    owners = [
        sample.key
        for sample, request in part
        for _ in range(len(request.parts) if isinstance(request, RequestGroup) else 1)
    ]
    for incident in take():
        keys = sorted({owners[i] for i in incident.requests if 0 <= i < len(owners)})
        run.append_incident(keys, incident.message)
        outcome.incidents.append(f"{incident.message} (samples {', '.join(keys)})")


def _by_weight(requests: list[tuple[Sample[Any], Any]], batch: int) -> list[list[tuple[Sample[Any], Any]]]:
    """Consecutive slices of at most ``batch`` requests, a :class:`RequestGroup` counting as its parts
    (a film's 80 subtitle chunks go alone), so each call is of the backend's batch size and rows are
    stored, and progress shown, after each."""
    slices: list[list[tuple[Sample[Any], Any]]] = []
    current: list[tuple[Sample[Any], Any]] = []
    weight = 0
    for item in requests:
        size = len(item[1].parts) if isinstance(item[1], RequestGroup) else 1
        if current and weight + size > batch:
            slices.append(current)
            current, weight = [], 0
        current.append(item)
        weight += size
    if current:
        slices.append(current)
    return slices


def _store(
    task: Task[Any, Any],
    kind: str,
    run: RunDir,
    sample: Sample[Any],
    result: Any,
    reused: bool,
    outcome: RunOutcome,
    progress: Progress,
    on_row: OnRow | None,
) -> None:
    try:
        row = task.row(sample, result, kind, reused=reused)
    except Exception as exc:
        _record_error(run, outcome, sample, exc)
        progress.update(items=1, tokens=0)
        return
    tokens = 0 if reused else tokens_of(result)
    run.append(row.model_dump(mode="json", exclude_none=False), tokens=tokens)
    outcome.reused += int(reused)
    outcome.scored += int(not reused)
    progress.update(items=1, tokens=tokens)
    if on_row is not None:
        on_row(row)


def _record_error(run: RunDir, outcome: RunOutcome, sample: Sample[Any], exc: BaseException) -> None:
    where = f" (book {sample.group})" if sample.group else ""
    message = f"{type(exc).__name__}: {exc}{where}"
    run.append_error(sample.key, message)
    outcome.errors.append((sample.key, message))
