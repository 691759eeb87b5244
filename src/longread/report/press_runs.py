"""``longread presses``' runs: the full cache once, then every press × ratio, on the same samples.

The model is loaded once by the caller; each setting is one ordinary run (``out/full``,
``out/<press>-<ratio>``: resumable, an existing run's finished samples kept) with the backend's press
switched between them (:meth:`~longread.models.hf.backend.HFBackend.use_press`). Each setting's cost is
measured as it runs — wall seconds and the process's peak resident memory during it (sampled every
20 ms from ``/proc``), after the memory earlier settings freed is handed back to the system (glibc's
``malloc_trim``), with the resident memory it started from — and kept beside the run
(``press_cost.json``); a resumed setting that scored nothing keeps the cost of the session that did.
The settings share one process, so a later setting's peak can still hold what the allocator kept of an
earlier one: the page calls it an upper bound, and ``bench/presses_memory.py`` measures each setting in a
process of its own.
"""

from __future__ import annotations

import ctypes
import gc
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from longread.evaluation.runner import RunOptions, run_task
from longread.files import atomic_write_text
from longread.models.press_spec import PressError, PressSpec

FULL = "full"
COST_FILE = "press_cost.json"


def setting_name(press: PressSpec | None) -> str:
    return FULL if press is None else f"{press.name}-{press.ratio:g}"


@dataclass(frozen=True)
class SettingCost:
    seconds: float
    """Wall time of the session that scored this setting's samples."""
    peak_rss_mb: float
    """The process's largest resident memory while it ran (model weights included)."""
    scored: int
    start_rss_mb: float | None = None
    """The resident memory it started from (the model loaded, freed memory handed back)."""


@dataclass(frozen=True)
class PressRun:
    press: PressSpec | None
    path: Path
    cost: SettingCost | None
    failed: int
    refused: str | None = None
    """Why the press could not run on this model (kvpress's own error); the setting has no run then."""


def rss_mb() -> float:
    """This process's resident memory now (MB; NaN where /proc cannot tell)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def hand_back_memory() -> None:
    """Collect garbage and return the heap's free pages to the system (glibc only; a no-op elsewhere)."""
    gc.collect()
    with suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


@contextmanager
def peak_rss() -> Iterator[list[float]]:
    """Yields a one-item list that holds the largest RSS (MB) seen while the block ran."""
    peak = [rss_mb()]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak[0] = max(peak[0], rss_mb())

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield peak
    finally:
        done.set()
        thread.join()
        peak[0] = max(peak[0], rss_mb())


def _read_cost(path: Path) -> SettingCost | None:
    try:
        return SettingCost(**json.loads((path / COST_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def run_presses(
    make: Callable[[], Any],
    data: Path,
    backend: Any,
    out: Path,
    presses: Sequence[PressSpec],
    options: RunOptions,
    *,
    on_run: Callable[[int, int, str, Path], None] | None = None,
) -> list[PressRun]:
    """The full-cache run, then one run per press (``make()`` gives a fresh task each time)."""
    chosen: list[PressSpec | None] = [None, *presses]
    runs: list[PressRun] = []
    for index, press in enumerate(chosen, start=1):
        path = out / setting_name(press)
        if on_run is not None:
            on_run(index, len(chosen), setting_name(press), path)
        try:
            backend.use_press(press)
        except PressError as exc:
            runs.append(PressRun(press, path, None, 0, str(exc)))
            continue
        hand_back_memory()
        start_rss = rss_mb()
        started = time.perf_counter()
        with peak_rss() as peak:
            outcome = run_task(make(), data, backend, path, options)
        cost = _read_cost(path)
        if outcome.scored or cost is None:
            seconds = round(time.perf_counter() - started, 3)
            cost = SettingCost(
                seconds, round(max(peak[0], start_rss), 1), outcome.scored, round(start_rss, 1)
            )
            atomic_write_text(path / COST_FILE, json.dumps(asdict(cost), indent=2) + "\n")
        runs.append(PressRun(press, path, cost, len(outcome.errors)))
    backend.use_press(None)
    return runs
