"""The waves of a run: pending samples asked in batches, each result stored as soon as it comes.

Each wave sends, for every reuse group still open, its next pending sample (the smallest context
budget); a result whose context was not cut answers the group's larger budgets too. Requests of one
wave go to the backend in one call per batch, so a batching backend gets many requests at once while
reuse stays exact. A failing request is retried alone so it cannot fail its neighbours; its error is
logged in the run and the run goes on.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

from longread.evaluation.dispatch import ask, context_was_cut, tokens_of
from longread.evaluation.outcome import OnRow, RunOutcome
from longread.evaluation.task import Sample, Task
from longread.models.errors import FatalBackendError
from longread.models.requests.groups import RequestGroup
from longread.progress import Progress
from longread.runs.errors import RunWriteError
from longread.runs.inputs_log import inputs_line
from longread.runs.run_dir import RunDir

logger = logging.getLogger(__name__)


def run_chunk(
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
    for part in by_weight(requests, batch):
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


def by_weight(requests: list[tuple[Sample[Any], Any]], batch: int) -> list[list[tuple[Sample[Any], Any]]]:
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
    record = row.model_dump(mode="json", exclude_none=False)
    # Under a KV-cache press: the press, its ratio and the cache it kept for this sample's context.
    record.update(getattr(result, "kept_cache", None) or {})
    run.append(record, tokens=tokens)
    if run.inputs is not None:
        run.inputs.append(inputs_line(sample.key, result))
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
