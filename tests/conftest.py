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
from tests.module_seconds import SLOW_SECONDS, measured

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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``external`` what starts a server, cluster, browser or external harness, and ``slow`` the
    modules of ``module_seconds.txt`` that take 5 s or more (``make check`` leaves both to ``make test``);
    a test may also say so itself with ``@pytest.mark.external`` or ``@pytest.mark.slow``."""
    root = Path(str(config.rootpath))
    harness_modules: dict[Path, bool] = {}
    seconds = measured()
    for item in items:
        path = Path(str(item.path))
        relative = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()
        if seconds.get(relative, 0.0) >= SLOW_SECONDS:
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
