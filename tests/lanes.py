"""``make test`` in two lanes at once: the tests that mostly wait on processes of their own (a vLLM server,
Ray clusters, ``longread`` commands, a wheel's install — marked ``servers`` by ``tests/conftest.py``) next
to everything else, each lane one pytest process.

The servers lane keeps one core busy on average (measured: 55% of two cores over the served modules),
so the model-heavy main lane runs beside it instead of after it. A few model-heavy modules go to the
servers lane too (``BALANCE`` in ``tests/conftest.py``), so the two lanes end at about the same time.
The main lane prints as it goes; the servers lane's output is kept in a file and printed when both have
ended, each with its slowest tests. The exit status is the first failing lane's (0 when both pass).

Usage: ``python -m tests.lanes [PYTEST ARGS...]`` (the args go to both lanes, e.g. ``--durations=10``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVERS = "servers"
LANES = {"servers": f"{SERVERS}", "main": f"not {SERVERS}"}


ENV = {"OMP_WAIT_POLICY": "PASSIVE"}
"""Two lanes share two cores: a torch thread waiting for its team sleeps instead of spinning (measured on
a model-heavy module beside a busy core: 47 s against 60 s; alone 35 s against 34 s)."""


def _command(marker: str, args: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", marker, *args]


def main(args: list[str]) -> int:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="longread-lanes-") as folder:
        log = Path(folder) / "servers.log"
        with log.open("wb") as sink:
            command = _command(LANES["servers"], args)
            servers = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=os.environ | ENV)
            print(
                "tests: the servers lane (vLLM, Ray, commands, the wheel) runs beside this one; "
                f"its output follows at the end (pid {servers.pid})",
                flush=True,
            )
            main_code = subprocess.call(_command(LANES["main"], args), env=os.environ | ENV)
            servers_code = servers.wait()
        print(f"\n{'=' * 30} the servers lane {'=' * 30}", flush=True)
        sys.stdout.buffer.write(log.read_bytes())
    minutes = (time.monotonic() - started) / 60
    print(f"\ntests: main lane exit {main_code}, servers lane exit {servers_code}; {minutes:.1f} min in all")
    return main_code or servers_code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
