"""Seconds per test module on this machine (``tests/module_seconds.txt``, ``make module-seconds``).

A module of ``SLOW_SECONDS`` or more is marked ``slow``: ``make check`` leaves it to ``make test``. The
file is kept in the repository and made again when the suite changes; a module it does not list counts
as fast.

    python -m pytest --durations=0 --durations-min=0 -q | python tests/module_seconds.py
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

LINE = re.compile(r"^\s*([0-9.]+)s\s+(?:setup|call|teardown)\s+(\S+?\.py)::")
FILE = Path(__file__).parent / "module_seconds.txt"
SLOW_SECONDS = 5.0
"""A module this slow or slower is ``slow``."""


def module_seconds(report: str) -> dict[str, float]:
    """Seconds per test module, summed over a ``--durations=0`` report's setup, call and teardown lines."""
    totals: dict[str, float] = defaultdict(float)
    for line in report.splitlines():
        match = LINE.match(line)
        if match:
            totals[match.group(2)] += float(match.group(1))
    return dict(totals)


def measured() -> dict[str, float]:
    """The file's modules and seconds (``path  # N s`` a line); nothing when there is no file."""
    if not FILE.is_file():
        return {}
    seconds: dict[str, float] = {}
    for number, line in enumerate(FILE.read_text(encoding="utf-8").splitlines(), start=1):
        path, _, note = line.partition("#")
        if not path.strip():
            continue
        figure = re.fullmatch(r"\s*([0-9.]+) s\s*", note)
        if figure is None:
            raise SystemExit(f"{FILE}:{number}: expected 'tests/….py  # N s', got {line!r}")
        seconds[path.strip()] = float(figure.group(1))
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--min", type=float, default=1.0, help="List modules this slow or slower.")
    args = parser.parse_args()
    totals = module_seconds(sys.stdin.read())
    if not totals:
        raise SystemExit("no --durations lines on stdin: run pytest with --durations=0 --durations-min=0")
    listed = sorted(
        ((seconds, module) for module, seconds in totals.items() if seconds >= args.min), reverse=True
    )
    lines = [
        "# Seconds per test module as measured (make module-seconds). Modules of "
        f"{SLOW_SECONDS:g} s or more are slow: `make check` leaves them to `make test`.",
        *(f"{module}  # {seconds:.0f} s" for seconds, module in listed),
    ]
    FILE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    slow = [seconds for seconds, _ in listed if seconds >= SLOW_SECONDS]
    print(f"{len(listed)} modules listed, {len(slow)} slow ({sum(slow):.0f} s) → {FILE}")


if __name__ == "__main__":
    main()
