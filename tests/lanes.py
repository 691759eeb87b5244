"""``make test`` in two lanes at once: the tests that mostly wait on processes of their own (a vLLM server,
Ray clusters, ``longread`` commands, a wheel's install — marked ``servers`` by ``tests/conftest.py``) next
to everything else, each lane one pytest process.

The servers lane keeps one core busy on average (measured: 55% of two cores over the served modules),
so the model-heavy main lane runs beside it instead of after it. A few model-heavy modules go to the
servers lane too (``BALANCE`` in ``tests/conftest.py``), so the two lanes end at about the same time.
The main lane prints as it goes; the servers lane's output is kept in a file and printed when both have
ended, each with its slowest tests. The exit status is the first failing lane's (0 when both pass).

The checks (ruff, mypy, the import contracts, the docs build: ``--checks COMMAND``) run beside the lanes
too, from their start: mypy alone takes most of a minute on one core, which the lanes' first minute can
spare. Their output follows the lanes'; a failing check fails the run as a failing test does.

Usage: ``python -m tests.lanes [--checks COMMAND] [PYTEST ARGS...]`` (the pytest args go to both lanes,
e.g. ``--durations=10``; COMMAND is one shell-quoted string, e.g. ``"make lint typecheck docs"``).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SERVERS = "servers"
LANES = {"servers": f"{SERVERS}", "main": f"not {SERVERS}"}


ENV = {"OMP_WAIT_POLICY": "PASSIVE"}
"""Two lanes share two cores: a torch thread waiting for its team sleeps instead of spinning (measured on
a model-heavy module beside a busy core: 47 s against 60 s; alone 35 s against 34 s)."""


def _command(marker: str, args: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", marker, *args]


def _split(argv: list[str]) -> tuple[list[str] | None, list[str]]:
    """(the checks' command or None, the pytest args)."""
    if argv[:1] == ["--checks"]:
        if len(argv) < 2:
            raise SystemExit("tests.lanes: --checks needs a command, e.g. --checks 'make lint typecheck'")
        return shlex.split(argv[1]), argv[2:]
    return None, argv


def _say_when_ended(checks: subprocess.Popen[bytes], started: float) -> None:
    """One line as soon as the checks end, so that a failing lint is known long before the lanes end."""
    code = checks.wait()
    verdict = "passed" if code == 0 else f"FAILED (exit {code}); their output follows at the end"
    print(f"\ntests: the checks {verdict} ({time.monotonic() - started:.0f} s)", flush=True)


def main(argv: list[str]) -> int:
    checks_command, args = _split(argv)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="longread-lanes-") as folder:
        log, checks_log = Path(folder) / "servers.log", Path(folder) / "checks.log"
        with log.open("wb") as sink, checks_log.open("wb") as checks_sink:
            checks = (
                subprocess.Popen(checks_command, stdout=checks_sink, stderr=subprocess.STDOUT)
                if checks_command
                else None
            )
            command = _command(LANES["servers"], args)
            servers = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=os.environ | ENV)
            if checks:
                threading.Thread(target=_say_when_ended, args=(checks, started), daemon=True).start()
            beside = "; the checks run beside both" if checks else ""
            print(
                "tests: the servers lane (vLLM, Ray, commands, the wheel) runs beside this one; "
                f"its output follows at the end (pid {servers.pid}){beside}",
                flush=True,
            )
            main_code = subprocess.call(_command(LANES["main"], args), env=os.environ | ENV)
            servers_code = servers.wait()
            checks_code = checks.wait() if checks else 0
        print(f"\n{'=' * 30} the servers lane {'=' * 30}", flush=True)
        sys.stdout.buffer.write(log.read_bytes())
        if checks:
            print(f"\n{'=' * 30} the checks: {shlex.join(checks_command or [])} {'=' * 30}", flush=True)
            sys.stdout.buffer.write(checks_log.read_bytes())
    minutes = (time.monotonic() - started) / 60
    said = f", checks exit {checks_code}" if checks else ""
    codes = f"main lane exit {main_code}, servers lane exit {servers_code}{said}"
    print(f"\ntests: {codes}; {minutes:.1f} min in all")
    return main_code or servers_code or checks_code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
