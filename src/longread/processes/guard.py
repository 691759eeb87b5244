"""``python -m longread.processes.guard [--parent PID] [--grace S] -- COMMAND…``: run COMMAND so that it and
everything it starts end when the guard's parent ends.

A server such as vLLM runs in a process group of its own (so it can be stopped as a group and a Ctrl-C
meant for the caller's terminal does not tear it down half-way) — which also means a signal to the
caller's group never reaches it. The guard closes that gap:

- the kernel sends it SIGTERM when its parent ends, however the parent ends (``PR_SET_PDEATHSIG``,
  SIGKILL included); if the parent is already gone when the guard starts, it stops at once;
- it is a *subreaper*: whatever COMMAND starts and leaves behind (vLLM's engine core) is re-parented
  to the guard rather than to init, so the guard still sees the whole tree;
- on SIGTERM, SIGINT or SIGHUP, on its parent's end, or when COMMAND exits by itself, it sends SIGTERM
  to every process below it, waits up to ``--grace`` seconds, SIGKILLs what is left and reaps it all.

Its exit code is COMMAND's when COMMAND ended by itself, 143 when the guard stopped it. Linux only (the
two ``prctl`` calls); elsewhere it still runs COMMAND and stops the tree on a signal.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from types import FrameType

from longread.processes.lifetime import become_subreaper, set_parent_death_signal
from longread.processes.tree import descendants

STOPPED_CODE = 143
POLL_S = 0.1

_stop_requested: list[int] = []


def _request_stop(signum: int, _frame: FrameType | None) -> None:
    _stop_requested.append(signum)


def guarded_command(command: Sequence[str], *, grace_s: float = 10.0) -> list[str]:
    """``command`` run under a guard whose parent is this process (start it with ``start_new_session``)."""
    return [
        sys.executable, "-m", "longread.processes.guard",
        "--parent", str(os.getpid()), "--grace", f"{grace_s:g}", "--", *command,
    ]  # fmt: skip


def _reap() -> dict[int, int]:
    """Reap every ended child (COMMAND and adopted orphans); pid → exit code (128 + N when signal N
    killed it, as a shell says)."""
    ended: dict[int, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        code = os.waitstatus_to_exitcode(status)
        ended[pid] = 128 - code if code < 0 else code


def _signal_all(pids: Sequence[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def end_tree(grace_s: float) -> None:
    """SIGTERM to every process below this one, up to ``grace_s`` s to go, then SIGKILL; all reaped."""
    me = os.getpid()
    _signal_all(descendants(me), signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while descendants(me) and time.monotonic() < deadline:
        _reap()
        time.sleep(POLL_S)
    # Repeat: a process may fork while it is being killed.
    for _ in range(50):
        left = descendants(me)
        if not left:
            break
        _signal_all(left, signal.SIGKILL)
        time.sleep(POLL_S)
        _reap()
    _reap()


def run(parent: int, grace_s: float, command: Sequence[str]) -> int:
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, _request_stop)
    become_subreaper()
    set_parent_death_signal(signal.SIGTERM)
    if os.getppid() != parent:  # the parent ended before the death signal was set
        return STOPPED_CODE
    child = subprocess.Popen(list(command))
    code: int | None = None
    while code is None and not _stop_requested:
        code = _reap().get(child.pid)
        if code is None and os.getppid() != parent:
            break
        if code is None:
            time.sleep(POLL_S)
    end_tree(grace_s)
    child.returncode = STOPPED_CODE if code is None else code  # reaped here, not by Popen
    return child.returncode


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m longread.processes.guard", description=__doc__)
    parser.add_argument(
        "--parent",
        type=int,
        default=os.getppid(),
        help="whose end ends COMMAND (default: the guard's parent)",
    )
    parser.add_argument("--grace", type=float, default=10.0, help="seconds between SIGTERM and SIGKILL")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ARGS…")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no COMMAND after --")
    return run(args.parent, args.grace, command)


if __name__ == "__main__":
    sys.exit(main())
