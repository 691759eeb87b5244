"""The ordered worker pool: input order, the job's own errors, dying workers, and an end in any way
that leaves no worker behind (a stop signal while a worker forks included)."""

from __future__ import annotations

import multiprocessing
import multiprocessing.process
import os
import signal
import threading
import time
from collections.abc import Generator
from pathlib import Path
from types import FrameType
from typing import cast

import pytest

from longread.processes.ordered_pool import OrderedPool
from longread.processes.tree import is_alive


def _slow_square(item: int) -> tuple[int, int]:
    time.sleep(0.002 * ((item * 7) % 5))  # uneven: later items often finish first
    return item * item, os.getpid()


def _lost(item: int, exitcode: int) -> tuple[int, int]:
    return -item, exitcode


def _no_loss(item: int, exitcode: int) -> tuple[int, int]:
    raise AssertionError(f"item {item} was lost (exit {exitcode})")


def _raise_on_three(item: int) -> tuple[int, int]:
    if item == 3:
        raise ValueError("three is not welcome")
    return item, os.getpid()


class _DieOnce:
    """Kills its worker on ``item`` the first ``times`` times it is given (counted in a file)."""

    def __init__(self, item: int, times: int, marks: Path) -> None:
        self.item, self.times, self.marks = item, times, marks

    def __call__(self, item: int) -> tuple[int, int]:
        if item == self.item:
            with self.marks.open("a") as marks:
                marks.write("x")
            if len(self.marks.read_text()) <= self.times:
                os.kill(os.getpid(), signal.SIGKILL)
        return item * item, os.getpid()


def _workers_running() -> int:
    return sum(child.name == "longread-worker" for child in multiprocessing.active_children())


def _gone(pids: set[int]) -> bool:
    return not any(is_alive(pid) for pid in pids)


@pytest.mark.parametrize("workers", [1, 3])
def test_results_come_back_in_input_order_and_no_worker_stays(workers: int) -> None:
    pool = OrderedPool(workers, _slow_square, _no_loss, window=4)
    results = list(pool.map(range(40)))
    assert [square for square, _ in results] == [item * item for item in range(40)]
    pids = {pid for _, pid in results}
    assert pids and len(pids) <= workers and os.getpid() not in pids
    assert _gone(pids)


def test_the_jobs_own_exception_reaches_the_caller_and_the_workers_end() -> None:
    pool = OrderedPool(2, _raise_on_three, _no_loss)
    seen: list[int] = []
    with pytest.raises(ValueError, match="three is not welcome"):
        for item, pid in pool.map(range(10)):
            seen.append(pid)
            assert item < 3
    assert _gone(set(seen))


def _noted(result: tuple[int, int], exitcode: int) -> tuple[int, int]:
    return result[0], exitcode  # the pid gives way to the exit code of the worker that died


def test_a_worker_that_dies_is_replaced_and_its_item_tried_again(tmp_path: Path) -> None:
    pool = OrderedPool(2, _DieOnce(5, times=1, marks=tmp_path / "marks"), _no_loss, on_retried=_noted)
    results = list(pool.map(range(12)))
    assert [square for square, _ in results] == [item * item for item in range(12)]
    assert results[5][1] == -signal.SIGKILL  # the retry is told, on that item only
    assert all(pid > 0 for _, pid in results[:5] + results[6:])
    assert (tmp_path / "marks").read_text() == "xx"  # died once, answered the second time
    assert _gone({pid for _, pid in results[:5] + results[6:]})


def test_an_item_that_kills_every_worker_it_meets_is_lost_in_its_place_only(tmp_path: Path) -> None:
    pool = OrderedPool(2, _DieOnce(5, times=99, marks=tmp_path / "marks"), _lost)
    results = list(pool.map(range(12)))
    assert results[5] == (-5, -signal.SIGKILL)
    assert [square for square, _ in results[:5] + results[6:]] == [i * i for i in range(12) if i != 5]
    assert (tmp_path / "marks").read_text() == "xx"  # two workers, then given up


def test_leaving_the_stream_early_kills_the_workers() -> None:
    pool = OrderedPool(2, _slow_square, _no_loss)
    stream = cast(Generator[tuple[int, int], None, None], pool.map(range(1000)))
    _, first = next(stream)
    assert _workers_running() == 2
    stream.close()  # what a caller's exception or interrupt does to the generator
    assert _gone({first}) and _workers_running() == 0


class _Interrupted(KeyboardInterrupt):
    pass


def test_a_stop_signal_during_a_fork_interrupts_the_parent_and_no_worker_stays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SIGTERM sent to the forking thread at the instant a worker forks (from inside ``Process.start``)
    waits until the fork is done, then interrupts the parent; the worker, born without the parent's
    handler, is killed on the way out. Another thread runs meanwhile, as in a real command (a signal
    sent to the whole process may be taken by any thread that does not block it: that is why leaving
    the stream kills the workers with SIGKILL whatever they do with SIGTERM). (With
    ``multiprocessing.Pool`` this window left a worker that ignored SIGTERM and a command that waited
    on it for good.)"""
    started: list[int] = []
    real_start = multiprocessing.process.BaseProcess.start
    forking_thread = threading.get_ident()

    def start_under_a_signal(self: multiprocessing.process.BaseProcess) -> None:
        signal.pthread_kill(forking_thread, signal.SIGTERM)  # pending: blocked while the worker forks
        real_start(self)
        assert self.pid is not None
        started.append(self.pid)

    def interrupt(signum: int, _frame: FrameType | None) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # as longread's commands do while unwinding
        raise _Interrupted

    other_thread_ends = threading.Event()
    other_thread = threading.Thread(target=other_thread_ends.wait, daemon=True)
    other_thread.start()
    previous = signal.signal(signal.SIGTERM, interrupt)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", start_under_a_signal)
    try:
        with pytest.raises(_Interrupted):
            list(OrderedPool(2, _slow_square, _no_loss).map(range(100)))
    finally:
        signal.signal(signal.SIGTERM, previous)
        other_thread_ends.set()
    assert started and _gone(set(started))


def test_no_workers_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="at least one worker"):
        list(OrderedPool(0, _slow_square, _no_loss).map(range(3)))
