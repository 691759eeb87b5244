"""What every test shares: a process the tests start ends when the test session ends, however it ends.

``subprocess.Popen`` (and so ``subprocess.run`` and asyncio's subprocesses) gets the kernel's
parent-death signal for the children the tests start, unless a test asks for its own ``preexec_fn``: a
``longread`` command, an ``unshare`` holding a Ray cluster or Playwright's driver is SIGKILLed when the
pytest process ends — killed by ``timeout``, Ctrl-C or SIGKILL included. What those start in turn is
ended by their own means (the vLLM guard, the Ray namespace's ``--kill-child``, the pool's initializer).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from longread.processes.lifetime import dying_with_parent

_original_popen = subprocess.Popen


class _DyingWithTheTests(_original_popen):  # type: ignore[type-arg,misc]
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("preexec_fn") is None:
            kwargs["preexec_fn"] = dying_with_parent()
        super().__init__(*args, **kwargs)


def pytest_configure(config: pytest.Config) -> None:
    subprocess.Popen = _DyingWithTheTests  # type: ignore[misc]


def pytest_unconfigure(config: pytest.Config) -> None:
    subprocess.Popen = _original_popen  # type: ignore[misc]


EXTERNAL_FOLDERS = ("tests/models/served/", "tests/scaleout/")
"""Every test here starts a vLLM server or a Ray cluster."""
EXTERNAL_FIXTURES = {"browser"}
"""A test that takes one of these drives headless Chromium."""
EXTERNAL_HARNESS_CALLS = ("simple_evaluate", "inspect_ai", "running_vllm")
"""A test module that calls these runs lm-evaluation-harness, inspect_ai or a vLLM server."""


SLOW_MODULES_FILE = Path(__file__).parent / "slow_modules.txt"
"""Test modules that take long (a real model, a real build, the whole corpus), one path a line, measured
by ``make slow-modules``: marked ``slow``, so ``make check`` leaves them to ``make test``."""


def _slow_modules() -> set[str]:
    if not SLOW_MODULES_FILE.is_file():
        return set()
    lines = SLOW_MODULES_FILE.read_text(encoding="utf-8").splitlines()
    return {line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``external`` what starts a server, cluster, browser or external harness, and ``slow`` the
    modules of ``slow_modules.txt`` (``make check`` leaves both to ``make test``); a test may also say so
    itself with ``@pytest.mark.external`` or ``@pytest.mark.slow``."""
    root = Path(str(config.rootpath))
    harness_modules: dict[Path, bool] = {}
    slow = _slow_modules()
    for item in items:
        path = Path(str(item.path))
        relative = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()
        if relative in slow:
            item.add_marker(pytest.mark.slow)
        if path not in harness_modules:
            source = path.read_text(encoding="utf-8", errors="replace")
            harness_modules[path] = any(call in source for call in EXTERNAL_HARNESS_CALLS)
        if (
            relative.startswith(EXTERNAL_FOLDERS)
            or EXTERNAL_FIXTURES & set(getattr(item, "fixturenames", ()))
            or harness_modules[path]
        ):
            item.add_marker(pytest.mark.external)
