"""Build a ChapterBreak file from whole corpora: stream books, build in workers, write atomically."""

from __future__ import annotations

import contextlib
import functools
import random
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longread.benchmarks.chapterbreak.build import BuildOptions, CandidateStart, build_book, pool_entries
from longread.documents.corpus import LocalProcesses, SourceMapper, kept_sources, map_books
from longread.documents.reader import ExcludedBook, ReadOptions
from longread.documents.sources import Source
from longread.errors import LongreadError
from longread.files import atomic_writer
from longread.progress import Progress
from longread.scaleout.ray_books import RayMapper
from longread.scaleout.ray_options import RayOptions
from longread.scaleout.ray_session import ray_session

# Out-of-book negatives are drawn from a seeded reservoir of at most this many chapter starts.
DEFAULT_POOL_SIZE = 20_000
KEEP_BYTES = 2 << 30
"""An out-of-book build keeps the books its first pass read (pickled, in memory) up to this many bytes
for its second pass; books beyond it are read again. Only the time differs, never the output."""


@dataclass
class SkippedBook:
    label: str
    book_id: str | None
    reason: str


@dataclass
class BuildReport:
    out: Path
    books_read: int = 0
    books_used: int = 0
    instances: int = 0
    skipped_books: list[SkippedBook] = field(default_factory=list)
    excluded_books: list[SkippedBook] = field(default_factory=list)
    """Books left out on purpose (``--exclude-remembered``), with why; not counted as skipped."""
    dropped_boundaries: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    worker_notes: list[str] = field(default_factory=list)
    """Books whose Ray worker died and that were built again, with the cause (``--ray``)."""

    def summary_lines(self) -> list[str]:
        seconds = max(self.seconds, 1e-9)
        lines = [
            f"wrote {self.instances} instances from {self.books_used} of {self.books_read} books "
            f"to {self.out}",
            f"{self.seconds:.1f} s ({self.books_read / seconds:.2f} books/s, "
            f"{self.instances / seconds:.1f} instances/s)",
        ]
        if self.dropped_boundaries:
            lines.append("boundaries that gave no instance:")
            lines += [f"  {count:6d}  {reason}" for reason, count in sorted(self.dropped_boundaries.items())]
        if self.excluded_books:
            lines.append(f"books left out on purpose ({len(self.excluded_books)}):")
            lines += [f"  {s.label}: {s.reason}" for s in self.excluded_books]
        if self.skipped_books:
            lines.append(f"skipped books ({len(self.skipped_books)}):")
            width = max(len(s.label) for s in self.skipped_books)
            lines += [f"  {s.label:<{width}}  {s.reason}" for s in self.skipped_books]
        if self.worker_notes:
            lines.append(f"books rebuilt after their Ray worker died ({len(self.worker_notes)}):")
            lines += [f"  {note}" for note in self.worker_notes]
        return lines


class StrictBuildError(LongreadError):
    pass


def collect_pool(
    inputs: Iterable[str | Path],
    options: BuildOptions,
    read_options: ReadOptions,
    mapper: SourceMapper,
    pool_size: int = DEFAULT_POOL_SIZE,
    *,
    kept: dict[int, Source | None] | None = None,
) -> tuple[CandidateStart, ...]:
    """A seeded reservoir sample of candidate starts from every book (first pass of out-of-book builds).

    With ``kept`` (empty) the sources as read are put there by their place in the walk, in input order, up to
    ``KEEP_BYTES`` in all (None past it), for the second pass to read without parsing again."""
    rng = random.Random(f"longread/chapterbreak/pool/{options.seed}")
    reservoir: list[CandidateStart] = []
    seen = kept_bytes = 0
    per_book = functools.partial(pool_entries, options=options)
    keep = kept is not None
    for outcome in map_books(inputs, per_book, options=read_options, mapper=mapper, keep=keep):
        if kept is not None and outcome.source_index not in kept:
            source = outcome.kept
            kept_bytes += len(source.data or b"") if source is not None else 0
            kept[outcome.source_index] = source if kept_bytes <= KEEP_BYTES else None
        for entry in outcome.result or []:
            seen += 1
            if len(reservoir) < pool_size:
                reservoir.append(entry)
            else:
                slot = rng.randrange(seen)
                if slot < pool_size:
                    reservoir[slot] = entry
    return tuple(reservoir)


def build_chapterbreak(
    inputs: Sequence[str | Path],
    out: str | Path,
    options: BuildOptions = BuildOptions(),
    *,
    read_options: ReadOptions = ReadOptions(),
    workers: int = 1,
    strict: bool = False,
    show_progress: bool = True,
    ray: RayOptions | None = None,
) -> BuildReport:
    """Build instances from every book under ``inputs`` into ``out`` (JSONL, written atomically).

    Books that cannot be read or have no chapters are skipped and listed in the
    report; with ``strict`` any skipped book fails the build and ``out`` is not written.
    With ``ray`` the books are built as Ray tasks (``longread.scaleout.ray_books``):
    the same bytes; a book whose worker died is built again and named in the report.
    """
    started = time.perf_counter()
    report = BuildReport(out=Path(out))
    pool: tuple[CandidateStart, ...] = ()
    mapper: SourceMapper = LocalProcesses(workers) if ray is None else RayMapper(ray)
    sources: Iterable[Source] | None = None
    with _ray_for_build(ray):
        if options.negatives_from == "out-of-book":
            # Books are read once: the second pass takes them as the first read them (on this
            # machine; a Ray cluster's nodes read them again). The pool goes to each worker once.
            kept: dict[int, Source | None] | None = {} if ray is None else None
            pool = collect_pool(inputs, options, read_options, mapper, kept=kept)
            sources = None if kept is None else kept_sources(inputs, kept)
        per_book = functools.partial(build_book, options=options, out_of_book_pool=pool)
        _write_instances(inputs, out, per_book, report, read_options, mapper, strict, show_progress, sources)
    report.seconds = time.perf_counter() - started
    return report


@contextlib.contextmanager
def _ray_for_build(ray: RayOptions | None) -> Iterator[Any]:
    """One Ray session for both passes of a build (the pool pass and the instance pass)."""
    if ray is None:
        yield None
        return
    with ray_session(ray.address, ray.workers or 2) as session:
        yield session


def _write_instances(
    inputs: Sequence[str | Path],
    out: str | Path,
    per_book: functools.partial[Any],
    report: BuildReport,
    read_options: ReadOptions,
    mapper: SourceMapper,
    strict: bool,
    show_progress: bool,
    sources: Iterable[Source] | None = None,
) -> None:
    with (
        atomic_writer(out) as fh,
        Progress(
            total=None,
            desc="building ChapterBreak",
            unit="book",
            enabled=show_progress,
        ) as progress,
    ):
        outcomes = map_books(inputs, per_book, options=read_options, mapper=mapper, sources=sources)
        for outcome in outcomes:
            report.books_read += 1
            report.worker_notes += [f"{outcome.label}: {note}" for note in outcome.notes]
            if isinstance(outcome.error, ExcludedBook):
                report.excluded_books.append(
                    SkippedBook(outcome.label, outcome.book_id, outcome.error.problem)
                )
            elif outcome.error is not None:
                report.skipped_books.append(SkippedBook(outcome.label, outcome.book_id, str(outcome.error)))
            elif outcome.result is not None:
                built = outcome.result
                report.dropped_boundaries.update(built.dropped)
                if built.instances:
                    report.books_used += 1
                else:
                    report.skipped_books.append(
                        SkippedBook(outcome.label, outcome.book_id, "no boundary yielded an instance")
                    )
                for instance in built.instances:
                    fh.write(instance.model_dump_json() + "\n")
                report.instances += len(built.instances)
            progress.update(items=1)
        if strict and report.skipped_books:
            raise StrictBuildError(
                f"--strict: {len(report.skipped_books)} book(s) were skipped, so {out} was not written:\n"
                + "\n".join(f"  {s.label}: {s.reason}" for s in report.skipped_books)
            )
