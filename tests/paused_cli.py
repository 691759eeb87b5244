"""``longread ARGS…`` that stands still once it has stored ROWS sample rows: ``python paused_cli.py ROWS
MARKER ARGS…``.

The tests that kill a run mid-way (resume, timing of killed sessions) run the real CLI through this:
after the ROWS-th row is stored (appended and flushed by :meth:`RunDir.append`) it writes MARKER and
waits for the signal, so the kill lands after exactly ROWS rows on any machine, however fast or slow —
no race between the test and the run. Nothing else of the run is changed.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

from longread.cli.app import main
from longread.runs.run_dir import RunDir


def pause_after(rows: int, marker: Path) -> None:
    stored = RunDir.append

    def append(self: RunDir, row: Any, *, tokens: int = 0) -> None:
        stored(self, row, tokens=tokens)
        append.count += 1  # type: ignore[attr-defined]
        if append.count == rows:  # type: ignore[attr-defined]
            marker.write_text(str(rows), encoding="utf-8")
            while True:
                signal.pause()

    append.count = 0  # type: ignore[attr-defined]
    RunDir.append = append  # type: ignore[method-assign]


if __name__ == "__main__":
    pause_after(int(sys.argv[1]), Path(sys.argv[2]))
    sys.argv = ["longread", *sys.argv[3:]]
    main()
