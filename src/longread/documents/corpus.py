"""Read whole folders and archives of books as a stream, in parallel worker processes.

Work is handed out one source at a time and results come back in input order
(:class:`~longread.processes.ordered_pool.OrderedPool`), so output is deterministic whatever the
number of workers, and memory holds only the sources in flight, never the corpus. Who runs the work is a
:class:`SourceMapper` handed in: processes of this machine by default
(:class:`LocalProcesses`); a caller higher up may hand in another (Ray tasks:
``longread.scaleout.ray_books.RayMapper``), and this module never knows it.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from longread.documents.book import Book
from longread.documents.reader import ExcludedBook, ReadOptions, RepeatedBook, read_bytes_source, read_path
from longread.documents.sources import Source, iter_sources
from longread.errors import BadInputError
from longread.processes.ordered_pool import TRIES, OrderedPool

T = TypeVar("T")


@dataclass(frozen=True)
class BookOutcome(Generic[T]):
    """What one book gave: a result, or the reason it was skipped."""

    label: str
    book_id: str | None
    result: T | None = None
    error: BadInputError | None = None
    notes: tuple[str, ...] = ()
    """What happened on the way that did not stop it (its Ray worker died and it was built again)."""
    kept: Source | None = None
    """With ``map_books(..., keep=True)``: the source as read (every outcome of one source holds the
    same one), which a second ``map_books`` over :func:`kept_sources` reads without parsing again."""
    source_index: int = 0
    """The place of its source in the walk of the paths (set by :func:`map_books`): what
    :func:`kept_sources` keys the kept sources by, as a label may be given twice."""


def read_source(source: Source, options: ReadOptions = ReadOptions()) -> Iterator[Book | BadInputError]:
    if source.kept:
        assert source.data is not None
        items: list[Book | BadInputError] = pickle.loads(source.data)
        return iter(items)
    if source.path is not None:
        return read_path(source.path, options)
    assert source.data is not None
    return read_bytes_source(source.label, source.data, options)


@dataclass(frozen=True)
class _Job(Generic[T]):
    per_book: Callable[[Book], T]
    options: ReadOptions
    keep: bool = False

    def __call__(self, source: Source) -> list[BookOutcome[T]]:
        outcomes: list[BookOutcome[T]] = []
        read: list[Book | BadInputError] = []
        try:
            for item in read_source(source, self.options):
                read.append(item)
                if isinstance(item, BadInputError):
                    outcomes.append(BookOutcome(label=source.label, book_id=None, error=item))
                    continue
                why = self.options.excluded(item.id)
                if why is not None:
                    excluded = ExcludedBook(source.label, f"book {item.id} ({item.title}) left out: {why}")
                    outcomes.append(BookOutcome(source.label, item.id, error=excluded))
                    continue
                try:
                    outcomes.append(BookOutcome(source.label, item.id, result=self.per_book(item)))
                except BadInputError as exc:
                    outcomes.append(BookOutcome(source.label, item.id, error=exc))
                except Exception as exc:  # a bug on one book must not end a corpus-wide job
                    outcomes.append(BookOutcome(source.label, item.id, error=_unexpected(source, exc)))
        except BadInputError as exc:
            read.append(exc)
            outcomes.append(BookOutcome(label=source.label, book_id=None, error=exc))
        except Exception as exc:
            unexpected = _unexpected(source, exc)
            read.append(unexpected)
            outcomes.append(BookOutcome(label=source.label, book_id=None, error=unexpected))
        if self.keep and not source.kept:
            kept = Source(source.label, data=pickle.dumps(read, protocol=pickle.HIGHEST_PROTOCOL), kept=True)
            outcomes = [dataclasses.replace(outcome, kept=kept) for outcome in outcomes]
        return outcomes


def _unexpected(source: Source, exc: Exception) -> BadInputError:
    return BadInputError(
        source.label,
        f"unexpected {type(exc).__name__} while processing: {exc}",
        "this is a longread bug; please report it with this file",
    )


class SourceMapper(Protocol):
    """Runs ``job`` on every book source and yields its outcome lists in input order.

    ``job`` is picklable (it may run in another process or on another machine); an implementation
    may add notes to an outcome (a worker that died and was replaced) but never drops a source.
    """

    def __call__(
        self, job: Callable[[Source], list[BookOutcome[T]]], sources: Iterable[Source]
    ) -> Iterator[list[BookOutcome[T]]]: ...


@dataclass(frozen=True)
class LocalProcesses:
    """A :class:`SourceMapper` on this machine: ``workers`` processes (1: in this process)."""

    workers: int = 1

    def __call__(
        self, job: Callable[[Source], list[BookOutcome[T]]], sources: Iterable[Source]
    ) -> Iterator[list[BookOutcome[T]]]:
        if self.workers <= 1:
            for source in sources:
                yield job(source)
            return
        # Each worker runs one tokenizer thread: the parallelism is across books.
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        # The workers end with this process, however it ends (SIGKILL included), and whenever this
        # generator is left (an interrupt, an error, close()): no orphaned or hung pool. The job goes
        # to each worker once, when it starts (not with every source: a job may carry a large table,
        # such as ChapterBreak's out-of-book negative pool).
        pool: OrderedPool[Source, list[BookOutcome[T]]] = OrderedPool(
            self.workers, job, _lost_source, on_retried=_read_again
        )
        yield from pool.map(sources)


def _how_it_died(exitcode: int) -> str:
    return f"signal {-exitcode}" if exitcode < 0 else f"exit code {exitcode}"


def _read_again(outcomes: list[BookOutcome[T]], exitcode: int) -> list[BookOutcome[T]]:
    """The outcomes of a source whose first worker died (noted on the first, as Ray's mapper does)."""
    if not outcomes:
        return outcomes
    note = f"its worker process died ({_how_it_died(exitcode)}); read again in a new one"
    return [dataclasses.replace(outcomes[0], notes=(*outcomes[0].notes, note)), *outcomes[1:]]


def _lost_source(source: Source, exitcode: int) -> list[BookOutcome[T]]:
    """The outcome of a source that killed every worker that read it (the other books go on)."""
    how = _how_it_died(exitcode)
    return [
        BookOutcome(
            label=source.label,
            book_id=None,
            error=BadInputError(
                source.label,
                f"the {TRIES} worker processes that read it died ({how}; SIGKILL, signal 9, is often "
                "the out-of-memory killer)",
                "build with fewer --workers, or give the machine more memory; read it alone to see why",
            ),
        )
    ]


def map_books(
    paths: Iterable[str | Path],
    per_book: Callable[[Book], T],
    *,
    options: ReadOptions = ReadOptions(),
    mapper: SourceMapper = LocalProcesses(),
    keep: bool = False,
    sources: Iterable[Source] | None = None,
) -> Iterator[BookOutcome[T]]:
    """Apply ``per_book`` to every book under ``paths``; one outcome per book, in input order.

    ``per_book`` runs where ``mapper`` runs the work (it must be picklable: a module-level
    function or a ``functools.partial`` of one); a ``BadInputError`` it raises
    skips that book only. Whichever mapper runs it, the outcomes are the same.
    With ``keep`` each outcome holds its source as read (``BookOutcome.kept``), so a second pass
    over the same books (``sources=kept_sources(...)``) parses nothing again and gives the same
    outcomes; ``sources`` replaces the walk of ``paths``.
    """
    job: _Job[T] = _Job(per_book, options, keep)
    first_read: dict[str, str] = {}
    for index, outcomes in enumerate(mapper(job, iter_sources(paths) if sources is None else sources)):
        for outcome in outcomes:
            yield _once(dataclasses.replace(outcome, source_index=index), first_read)


def _once(outcome: BookOutcome[T], first_read: dict[str, str]) -> BookOutcome[T]:
    """The outcome, or where its book was read already (``first_read``: book id to the label it was
    first read from), a :class:`RepeatedBook` error in its place: a book is used once, whoever gave it
    twice, so no build holds its instances twice under the same ids."""
    if outcome.book_id is None:
        return outcome
    first = first_read.get(outcome.book_id)
    if first is None:
        if outcome.error is None:  # a copy that failed claims nothing: a later one may still be used
            first_read[outcome.book_id] = outcome.label
        return outcome
    if first == outcome.label:
        where = "this file was read already"
        hint = "give each file once (a folder and a file in it name the file twice)"
    else:
        where = f"a book with this id was read already from {first}"
        hint = "give each book once; if they are different books, rename one (plain-text ids are file names)"
    repeated = RepeatedBook(outcome.label, f"book {outcome.book_id} left out: {where}", hint)
    return dataclasses.replace(outcome, result=None, error=repeated)


def kept_sources(paths: Iterable[str | Path], kept: Mapping[int, Source | None]) -> Iterator[Source]:
    """The sources of a second pass over ``paths``: ``kept`` maps the place of each source in the first
    pass (``BookOutcome.source_index``), in its order, to the source as read (``BookOutcome.kept``), or
    to None where it was not kept (for memory); those are read again, found by walking ``paths`` once
    more."""
    if all(source is not None for source in kept.values()):
        yield from (source for source in kept.values() if source is not None)
        return
    for index, source in enumerate(iter_sources(paths)):
        yield kept.get(index) or source


def iter_books(
    paths: Iterable[str | Path], *, options: ReadOptions = ReadOptions(), workers: int = 1
) -> Iterator[Book | BadInputError]:
    """Every book under ``paths`` (files, folders, tar/zip archives), or the error that skipped it."""
    for outcome in map_books(paths, _identity, options=options, mapper=LocalProcesses(workers)):
        if outcome.error is not None:
            yield outcome.error
        elif outcome.result is not None:
            yield outcome.result


def _identity(book: Book) -> Book:
    return book
