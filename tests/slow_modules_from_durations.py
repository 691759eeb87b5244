"""Write ``tests/slow_modules.txt`` from a pytest run's ``--durations=0`` report (``make slow-modules``).

A module is slow when its tests (setup, call and teardown: a module fixture that loads a model counts)
take ``--seconds`` or more in all on this machine. ``make check`` leaves slow modules to ``make test``;
the list is a measurement, kept in the repository, made again when the suite changes.

    python -m pytest -m "not external" --durations=0 --durations-min=0 -q | \\
        python tests/slow_modules_from_durations.py --seconds 5
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

LINE = re.compile(r"^\s*([0-9.]+)s\s+(?:setup|call|teardown)\s+(\S+?\.py)::")
OUT = Path(__file__).parent / "slow_modules.txt"


def module_seconds(report: str) -> dict[str, float]:
    """Seconds per test module, summed over the report's setup, call and teardown lines."""
    totals: dict[str, float] = defaultdict(float)
    for line in report.splitlines():
        match = LINE.match(line)
        if match:
            totals[match.group(2)] += float(match.group(1))
    return dict(totals)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="A module this slow or slower is slow.")
    args = parser.parse_args()
    totals = module_seconds(sys.stdin.read())
    if not totals:
        raise SystemExit("no --durations lines on stdin: run pytest with --durations=0 --durations-min=0")
    slow = sorted((seconds, module) for module, seconds in totals.items() if seconds >= args.seconds)
    kept = sum(seconds for seconds in totals.values() if seconds < args.seconds)
    lines = [
        f"# Test modules of {args.seconds:g} s or more where they were measured (make slow-modules);",
        "# `make check` leaves them to `make test`. Seconds as measured, for the reader:",
        *(f"{module}  # {seconds:.0f} s" for seconds, module in reversed(slow)),
    ]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(slow)} slow modules ({sum(s for s, _ in slow):.0f} s); the rest: {kept:.0f} s → {OUT}")


if __name__ == "__main__":
    main()
