"""The kernel's view of a process tree (Linux ``/proc``): who is alive, who descends from whom, what
listens on a port. Stdlib only: :mod:`longread.processes.guard` runs it as a script."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state, ppid, pgrp, …), None if gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def is_alive(pid: int) -> bool:
    """Running or sleeping; a zombie (ended, not yet reaped) counts as gone."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def parent_of(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return None if fields is None else int(fields[1])


def process_group_of(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return None if fields is None else int(fields[2])


def all_pids() -> list[int]:
    return [int(entry.name) for entry in PROC.iterdir() if entry.name.isdigit()]


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (children, their children, …), parents before children."""
    children: dict[int, list[int]] = {}
    for pid in all_pids():
        parent = parent_of(pid)
        if parent is not None:
            children.setdefault(parent, []).append(pid)
    found: list[int] = []
    queue = list(children.get(root, []))
    while queue:
        pid = queue.pop(0)
        found.append(pid)
        queue.extend(children.get(pid, []))
    return [pid for pid in found if is_alive(pid)]


def group_members(pgid: int) -> list[int]:
    """Every live process of process group ``pgid``."""
    return [pid for pid in all_pids() if process_group_of(pid) == pgid and is_alive(pid)]


def alive(pids: Iterable[int]) -> list[int]:
    return [pid for pid in pids if is_alive(pid)]


def listening_ports() -> set[int]:
    """TCP ports something on this machine (this network namespace) listens on."""
    ports: set[int] = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = (PROC / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 3 and fields[3] == "0A":  # TCP_LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports
