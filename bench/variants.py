"""What the side-by-side benches share: every variant measured in a fresh process of the same script
(``--worker VARIANT``), its peak memory from the kernel's RSS high-water mark, its result handed back as
one JSON line — and the ``__main__`` that finds longread in ``src/`` when it is not installed.

``bench/long_window.py`` and ``bench/shared_prefix.py`` use it.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")


def rss_kb(field: str) -> int:
    """A ``/proc/self/status`` field in kB (``VmRSS``, ``VmHWM``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def reset_peak() -> float:
    """Reset the RSS high-water mark (after loading, so the peak covers the work); the RSS now, in MB."""
    Path("/proc/self/clear_refs").write_text("5")
    return rss_kb("VmRSS") / 1024


def peak_mb() -> float:
    return rss_kb("VmHWM") / 1024


def run_worker(script: str, variant: str, arguments: list[str], result: type[T], what: str) -> T:
    """Run ``script --worker VARIANT ARGUMENTS…`` in a fresh process; its last stdout line as ``result``."""
    command = [sys.executable, script, "--worker", variant, *arguments]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{what} failed:\n{done.stderr[-3000:]}")
    return result(**json.loads(done.stdout.strip().splitlines()[-1]))


def emit(run: Any) -> None:
    """A worker's result, as the one JSON line :func:`run_worker` reads."""
    print(json.dumps(dataclasses.asdict(run)))


def bench_main(main: Callable[[], None]) -> None:
    """Run ``main`` with longread importable (from ``src/`` when it is not installed)."""
    try:
        import longread  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(ROOT / "src"))
    main()
