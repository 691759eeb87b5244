"""The presses' environment (``make presses``: kvpress with transformers 5.2.0): where its Python is, and
the shipped models converted by the project's environment for it to read."""

from __future__ import annotations

import os
import subprocess
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


def longread_in_presses(*args: str, cwd: Path = REPO_ROOT, timeout: float = 900) -> Any:
    """``longread ARGS`` run by the presses' Python: the finished process (output captured)."""
    command = [str(presses_python()), "-m", "longread.cli", *args]
    environment = os.environ | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=timeout, env=environment)
