"""Books on Ray: one Ray task per book source, results back in input order.

The driver walks the sources (files, folders, archive members) and keeps up to
twice as many tasks in flight as there are CPUs in the Ray it uses; each task
reads its source and runs the per-book function (a ChapterBreak build of one
book, say) in a Ray worker and returns the book outcomes. The driver takes the
answers strictly in input order, so what it writes is what a one-process build
writes, byte for byte: the per-book work is seeded per book and never depends on
where it ran.

A worker that dies (killed, out of memory, its node lost) does not end the
build: its book is sent once more (recorded as a note on the book's outcome,
with the cause); if it dies again the book is skipped with the cause, like an
unreadable book, and the build goes on.

Book files are read where the task runs: on a cluster they must be on a file
system every node sees, at the same path (archive members travel as bytes). Paths are
sent absolute: a joined cluster's workers run in the directory ``ray start`` was run
from, not the driver's.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from longread.documents.corpus import BookOutcome
from longread.documents.sources import Source
from longread.errors import BadInputError
from longread.scaleout.ray_options import RayOptions
from longread.scaleout.ray_session import death_cause, death_errors, ray_session

IN_FLIGHT_PER_CPU = 2

T = TypeVar("T")


@dataclass(frozen=True)
class RayMapper:
    """A ``longread.documents.corpus.SourceMapper`` whose workers are Ray tasks (what ``map_books`` and
    the builds take as ``mapper`` for ``--ray``)."""

    options: RayOptions

    def __call__(
        self, job: Callable[[Source], list[BookOutcome[T]]], sources: Iterable[Source]
    ) -> Iterator[list[BookOutcome[T]]]:
        return map_sources_on_ray(job, sources, self.options)


def map_sources_on_ray(
    job: Callable[[Source], list[BookOutcome[T]]],
    sources: Iterable[Source],
    options: RayOptions,
) -> Iterator[list[BookOutcome[T]]]:
    """``job(source)`` for every source, run as Ray tasks; the lists come back in input order.

    A source whose worker died twice gives one outcome that skips it with the cause.
    """
    with ray_session(options.address, options.workers or 2) as ray:
        task = ray.remote(_run_job).options(num_cpus=1, max_retries=0)
        job_ref = ray.put(job)
        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        window = max(1, cpus) * IN_FLIGHT_PER_CPU
        in_flight: deque[tuple[Source, Any]] = deque()
        pending = iter(sources)
        exhausted = False
        while True:
            while not exhausted and len(in_flight) < window:
                source = next(pending, None)
                if source is None:
                    exhausted = True
                    break
                in_flight.append((source, task.remote(job_ref, _absolute(source))))
            if not in_flight:
                return
            source, ref = in_flight.popleft()
            notes: list[str] = []
            outcomes: list[BookOutcome[T]] | None = None
            for attempt in range(2):
                try:
                    outcomes = list(ray.get(ref))
                    break
                except (*death_errors(ray), ray.exceptions.ObjectLostError) as died:
                    cause = death_cause(died)
                    if attempt == 0:
                        notes.append(f"its Ray worker died ({cause}); built again on another worker")
                        ref = task.remote(job_ref, _absolute(source))
                        continue
                    outcomes = [
                        BookOutcome(
                            label=source.label,
                            book_id=None,
                            error=BadInputError(
                                source.label,
                                f"its Ray worker died twice while working on it ({cause})",
                                "a worker may have run out of memory: give the Ray workers more memory, "
                                "or build this book without --ray",
                            ),
                            notes=tuple(notes),
                        )
                    ]
            assert outcomes is not None
            if notes and outcomes and not outcomes[0].notes:
                first = outcomes[0]
                outcomes[0] = BookOutcome(first.label, first.book_id, first.result, first.error, tuple(notes))
            yield outcomes


def _absolute(source: Source) -> Source:
    """The source with an absolute path (not resolved: a PG-19 file's folders must stay its own); its
    label — what reports and outputs call it — unchanged."""
    if source.path is None or source.path.is_absolute():
        return source
    return replace(source, path=source.path.absolute())


def _run_job(job: Callable[[Source], list[Any]], source: Source) -> list[Any]:
    return job(source)
