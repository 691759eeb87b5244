"""Worker processes that map a job over a stream and give the results back in input order.

Why not :class:`multiprocessing.pool.Pool`: a command stopped by SIGTERM while its pool was starting
could hang for good. ``Pool`` forks workers from a thread of its own, so a worker forked just before
or after the signal inherited the command's Python handler (or the ``SIG_IGN`` it leaves while it
unwinds) and ignored ``Pool.terminate``'s SIGTERM, while the command's exit joined it; and
``terminate`` itself waits on a lock an idle worker holds while it waits for a task that never
comes. Here:

- the stop signals are blocked in the forking thread while a worker forks, so the worker is born
  with them blocked and sets its own dispositions before it takes any (SIGINT ignored: Ctrl-C is the
  parent's to handle; SIGTERM and SIGHUP deadly); a signal sent to that thread meanwhile reaches the
  parent once the fork is done (one sent to the whole process may be taken by another thread at once;
  either way the worker never runs the parent's handler);
- each worker has a pipe of its own (no lock is shared), holds one item at a time, and dies with the
  parent however the parent ends (:func:`~longread.processes.lifetime.die_with`);
- leaving :meth:`OrderedPool.map` in any way (the end, an exception, an interrupt, ``close()`` of the
  generator) kills every worker with SIGKILL and reaps it: nothing waits on a worker's goodwill;
- a worker that dies (the kernel's out-of-memory killer, a crash in a C library) is replaced and its
  item tried once more in the new worker; an item that kills its worker twice gets ``on_lost``'s
  value, so one item never stops the stream, and none is dropped.

Stdlib only, like the rest of :mod:`longread.processes`.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, Generic, TypeVar

from longread.processes.lifetime import die_with

A = TypeVar("A")
R = TypeVar("R")

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
TRIES = 2
"""How many workers an item may kill before ``on_lost`` stands for its result."""


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection
    item: tuple[int, Any] | None = None
    """The item (its index, itself) this worker holds, if any."""


@dataclass
class OrderedPool(Generic[A, R]):
    """``workers`` processes running ``job``; :meth:`map` yields ``job(item)`` for every item, in order.

    ``job`` must be picklable where processes are spawned (elsewhere than Linux); it reaches each
    worker once, when the worker starts. ``on_lost(item, exitcode)`` gives the result of an item that
    killed ``TRIES`` workers (``exitcode`` is the last one's: ``-9`` for SIGKILL). At most ``window``
    items are read ahead of the first one not yet given back (default: four per worker), so memory
    holds a bounded part of the stream however uneven the items are.
    """

    workers: int
    job: Callable[[A], R]
    on_lost: Callable[[A, int], R]
    window: int = 0
    on_retried: Callable[[R, int], R] | None = None
    """Applied to the result of an item that killed a worker before another answered it (with that
    exit code): a caller records it (a book's note), so a retry is never silent."""

    def map(self, items: Iterable[A]) -> Iterator[R]:
        if self.workers < 1:
            raise ValueError(f"an ordered pool needs at least one worker, not {self.workers}")
        window = self.window or 4 * self.workers
        context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
        source = iter(items)
        done: dict[int, R] = {}
        tries: dict[int, int] = {}
        deaths: dict[int, int] = {}  # the exit code of the last worker an item killed
        next_in = next_out = 0
        exhausted = False
        live: list[_Worker] = []  # this stream's workers (a pool may stream more than once)
        try:
            idle = [self._start(context, live) for _ in range(self.workers)]
            while True:
                while idle and not exhausted and next_in < next_out + window:
                    try:
                        item = next(source)
                    except StopIteration:
                        exhausted = True
                        break
                    _hand(idle.pop(), next_in, item)
                    next_in += 1
                while next_out in done:
                    yield done.pop(next_out)
                    next_out += 1
                busy = [worker for worker in live if worker.item is not None]
                if not busy:
                    if exhausted:
                        return
                    continue
                for worker in _wait(busy):
                    index, lost = _held(worker)
                    answer = _answer(worker)
                    if answer is not None:
                        ok, value = answer
                        if not ok:
                            assert isinstance(value, BaseException)
                            raise value  # the job's own exception, as the job would have raised it here
                        died = deaths.pop(index, None)
                        if died is not None and self.on_retried is not None:
                            value = self.on_retried(value, died)  # type: ignore[arg-type]
                        done[index] = value  # type: ignore[assignment]
                        worker.item = None
                        idle.append(worker)
                        continue
                    # it died holding the item: a new worker takes its place (and the item, once more)
                    exitcode = _bury(worker, live)
                    tries[index] = tries.get(index, 0) + 1
                    deaths[index] = exitcode
                    replacement = self._start(context, live)
                    if tries[index] < TRIES:
                        _hand(replacement, index, lost)
                    else:
                        deaths.pop(index, None)
                        done[index] = self.on_lost(lost, exitcode)
                        idle.append(replacement)
        finally:
            _kill_all(live)

    def _start(self, context: multiprocessing.context.BaseContext, live: list[_Worker]) -> _Worker:
        ours, theirs = context.Pipe()
        process = context.Process(  # type: ignore[attr-defined]
            target=_serve, args=(theirs, os.getpid(), self.job), daemon=True, name="longread-worker"
        )
        # No stop signal may land between the fork and the worker's own dispositions.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS) if _masks else None
        try:
            process.start()
            live.append(_Worker(process, ours))
        finally:
            if blocked is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            theirs.close()
        return live[-1]


def _hand(worker: _Worker, index: int, item: object) -> None:
    worker.item = (index, item)
    # if it died already, the wait sees its sentinel and hands the item on
    with contextlib.suppress(BrokenPipeError, ConnectionResetError, EOFError):
        worker.conn.send((index, item))


def _wait(busy: list[_Worker]) -> list[_Worker]:
    by_handle: dict[Connection | int, _Worker] = {}
    for worker in busy:
        by_handle[worker.conn] = worker
        by_handle[worker.process.sentinel] = worker
    ready = wait(list(by_handle))
    seen: list[_Worker] = []
    for handle in ready:
        worker = by_handle[handle]  # type: ignore[index]  # wait gives back what it was given
        if worker not in seen:
            seen.append(worker)
    return seen


def _bury(worker: _Worker, live: list[_Worker]) -> int:
    """Reap a worker that died; its exit code."""
    worker.process.join()
    worker.conn.close()
    live.remove(worker)
    return worker.process.exitcode if worker.process.exitcode is not None else -1


def _kill_all(live: list[_Worker]) -> None:
    for worker in live:
        if worker.process.is_alive():
            worker.process.kill()
    for worker in live:
        worker.process.join()
        worker.conn.close()
    live.clear()


_masks = hasattr(signal, "pthread_sigmask")


def _held(worker: _Worker) -> tuple[int, Any]:
    assert worker.item is not None, "only busy workers are waited on"
    return worker.item


def _answer(worker: _Worker) -> tuple[bool, object] | None:
    """The worker's answer (ok, result or exception), or None when it died without one."""
    try:
        if worker.conn.poll():
            index, ok, value = worker.conn.recv()
            assert worker.item is not None and index == worker.item[0], "a worker answers what it holds"
            return ok, value
    except (EOFError, ConnectionResetError, OSError):
        return None
    return None


def _serve(conn: Connection, parent: int, job: Callable[[object], object]) -> None:
    """A worker: Ctrl-C is the parent's; SIGTERM and SIGHUP end it; it ends with ``parent``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    if _masks:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    die_with(parent)
    while True:
        try:
            index, item = conn.recv()
        except EOFError:  # the parent closed its end: nothing more comes
            return
        try:
            answer: tuple[int, bool, object] = (index, True, job(item))
        except Exception as exc:  # given back to the parent, which raises it
            answer = (index, False, exc)
        try:
            conn.send(answer)
        except Exception as exc:  # the result or the exception would not pickle
            conn.send((index, False, RuntimeError(f"{type(exc).__name__}: {exc}")))
