"""An append-only JSON-lines log that survives being killed at any moment.

Each row is one ``write`` of a whole line, then flush and ``fsync``: a kill loses
at most the row being written. On open, a torn tail (a last line without its
newline, or lines at the end that are not JSON — what a crash leaves behind) is
reported and cut off, so the sample is simply redone. A bad line *followed by*
good ones is not a crash remnant; it is refused with its line number rather
than dropped in silence.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longread.runs.errors import RunDirError, RunWriteError, write_failure_reason

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TornTail:
    """What was cut from the end of a log on open."""

    path: Path
    offset: int
    dropped_bytes: int
    dropped_lines: int


def read_rows(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The rows of a log and the byte length of its intact part (a torn tail is left out)."""
    data = path.read_bytes() if path.exists() else b""
    rows: list[dict[str, Any]] = []
    intact_end = 0
    torn_line: int | None = None
    position = 0
    line_no = 0
    while position < len(data):
        line_no += 1
        newline = data.find(b"\n", position)
        end = len(data) if newline < 0 else newline + 1
        row = _parse_row(data[position:end]) if newline >= 0 else None
        if row is None:
            torn_line = torn_line or line_no
        elif torn_line is not None:
            raise RunDirError(
                path,
                f"line {torn_line} is not a JSON row but later lines are; the file was edited or damaged",
                "repair or remove that line by hand, then resume",
            )
        else:
            rows.append(row)
            intact_end = end
        position = end
    return rows, intact_end


def _parse_row(line: bytes) -> dict[str, Any] | None:
    try:
        row = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return row if isinstance(row, dict) else None


class JsonlLog:
    """An open, locked, append-only JSON-lines file.

    The lock (``flock``) keeps a second process from appending to the same run.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise RunDirError(
                path,
                "is in use by another longread process",
                "wait for it to end or use another run directory",
            ) from None
        try:
            rows, intact_end = read_rows(path)
        except BaseException:
            self.close()
            raise
        self.torn_tail = self._cut_torn_tail(intact_end)
        self.initial_rows = rows
        self._broken = False

    def _cut_torn_tail(self, intact_end: int) -> TornTail | None:
        size = os.fstat(self._fd).st_size
        if size == intact_end:
            return None
        with open(self.path, "rb") as fh:
            fh.seek(intact_end)
            dropped = fh.read()
        os.ftruncate(self._fd, intact_end)
        os.fsync(self._fd)
        tail = TornTail(self.path, intact_end, len(dropped), dropped.count(b"\n") + 1)
        logger.warning(
            "%s: cut off a torn last row (%d bytes at offset %d) left by an interrupted run; "
            "that sample will be redone",
            self.path,
            tail.dropped_bytes,
            tail.offset,
        )
        return tail

    def append(self, row: dict[str, Any], stored: int) -> None:
        """Write ``row`` as one line and make it durable; ``stored`` is quoted if writing fails."""
        line = (json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        if self._broken:
            raise RunWriteError(self.path, "an earlier write failed", stored)
        start = os.fstat(self._fd).st_size
        try:
            written = 0
            while written < len(line):  # a nearly full disk can accept part of a write
                written += os.write(self._fd, line[written:])
            os.fsync(self._fd)
        except OSError as exc:
            self._undo_partial_write(start)
            raise RunWriteError(self.path, write_failure_reason(exc), stored) from exc

    def _undo_partial_write(self, start: int) -> None:
        """Cut what a failed write left, so no torn line sits before the next append."""
        try:
            os.ftruncate(self._fd, start)
            os.fsync(self._fd)
        except OSError:
            # The next open cuts the torn tail; appending after it now would bury it mid-file.
            self._broken = True

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # also releases the lock
            self._fd = -1
