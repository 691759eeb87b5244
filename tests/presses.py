"""The presses' environment (``make presses``: kvpress with transformers 5.2.0): where its Python is, and
the shipped models converted by the project's environment for it to read."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO_ROOT
from tests.models_fixtures import backend


def presses_python() -> Path:
    """``$LONGREAD_PRESSES_PYTHON`` (``make test`` sets it), else the checkout's ``.venv-presses``; a
    missing one fails the test with the way to make it."""
    python = Path(os.environ.get("LONGREAD_PRESSES_PYTHON") or REPO_ROOT / ".venv-presses" / "bin" / "python")
    if not python.is_file():
        pytest.fail(f"no presses environment at {python}: run `make presses` (make test does)")
    return python


def converted() -> None:
    """Both shipped models converted here (the presses' transformers may not convert a GGUF)."""
    backend("smollm2")
    backend("gemma3")


class _Server:
    """The presses' fork server (``tests/presses_server.py``), started at the first command and stopped
    at exit (or by :func:`stop_presses_server`)."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[str] | None = None
        self.made: Path | None = None  # at the first command, not when a lane imports this module

    @property
    def folder(self) -> Path:
        if self.made is None:
            self.made = Path(tempfile.mkdtemp(prefix="longread-presses-"))
        return self.made

    def _start(self) -> subprocess.Popen[str]:
        environment = os.environ | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        command = [str(presses_python()), "-m", "tests.presses_server"]
        with (self.folder / "server.log").open("w") as log:  # the server keeps its own copy
            pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": log}
            process = subprocess.Popen(
                command, text=True, cwd=REPO_ROOT, env=environment, start_new_session=True, **pipes
            )
        self.process = process
        self._answer(["(start)"], START_TIMEOUT_S)
        return process

    def _answer(self, args: list[str], timeout: float) -> dict[str, Any]:
        process = self.process
        assert process is not None and process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], timeout)
        line = process.stdout.readline() if ready else ""
        if not ready:
            self.stop()
            raise subprocess.TimeoutExpired(["longread", *args], timeout)
        if not line:
            self.stop()
            log = (self.folder / "server.log").read_text()[-3000:]
            raise RuntimeError(f"the presses' fork server ended; its output:\n{log}")
        return dict(json.loads(line))

    def run(self, args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
        alive = self.process is not None and self.process.poll() is None
        process = self.process if alive else self._start()
        assert process is not None and process.stdin is not None
        out, err = self.folder / "out", self.folder / "err"
        request = {"args": args, "cwd": str(cwd), "out": str(out), "err": str(err)}
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        code = int(self._answer(args, timeout)["returncode"])
        return subprocess.CompletedProcess(["longread", *args], code, out.read_text(), err.read_text())

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the server and a command it still runs
        process.wait()
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                pipe.close()


START_TIMEOUT_S = 300
_SERVER = _Server()


@atexit.register
def _at_exit() -> None:
    _SERVER.stop()
    if _SERVER.made is not None:
        shutil.rmtree(_SERVER.made, ignore_errors=True)


def stop_presses_server() -> None:
    """Stop the fork server (its imports hold ~0.5 GB); the next command starts it again."""
    _SERVER.stop()


def longread_in_presses(*args: str, cwd: Path = REPO_ROOT, timeout: float = 900) -> Any:
    """``longread ARGS`` run by the presses' Python, in a process of its own forked by the presses' fork
    server (the imports done once): the finished process (output captured), as ``subprocess.run`` gives."""
    return _SERVER.run(list(args), cwd, timeout)
