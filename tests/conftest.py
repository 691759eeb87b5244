"""What every test shares: a process the tests start ends when the test session ends, however it ends.

``subprocess.Popen`` (and so ``subprocess.run`` and asyncio's subprocesses) gets the kernel's
parent-death signal for the children the tests start, unless a test asks for its own ``preexec_fn``: a
``longread`` command, an ``unshare`` holding a Ray cluster or Playwright's driver is SIGKILLed when the
pytest process ends — killed by ``timeout``, Ctrl-C or SIGKILL included. What those start in turn is
ended by their own means (the vLLM guard, the Ray namespace's ``--kill-child``, the pool's initializer).
"""

from __future__ import annotations

import os
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
    _share_the_cores()


def _share_the_cores() -> None:
    """Under ``pytest -n N`` each worker's math libraries get their share of the cores (torch would
    otherwise start one thread per core in every worker, and N workers fight over them); a number the
    caller set is kept. No result depends on it: tolerances cover every thread count."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if not workers:
        return
    share = str(max(1, (os.cpu_count() or 1) // max(1, int(workers))))
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, share)


def pytest_unconfigure(config: pytest.Config) -> None:
    subprocess.Popen = _original_popen  # type: ignore[misc]


EXTERNAL_FOLDERS = ("tests/models/served/", "tests/scaleout/")
"""Every test here starts a vLLM server or a Ray cluster."""
EXTERNAL_FIXTURES = {"browser"}
"""A test that takes one of these drives headless Chromium."""
EXTERNAL_HARNESS_CALLS = ("simple_evaluate", "inspect_ai", "running_vllm")
"""A test module that calls these runs lm-evaluation-harness, inspect_ai or a vLLM server."""


XDIST_GROUPS = {"tests/models/served/": "vllm", "tests/scaleout/": "ray"}
"""Under ``pytest -n N`` (``--dist loadgroup``) the tests of a group run in one worker, one after another:
the served tests share their vLLM servers (and fixed ports), the Ray tests their cluster's namespace.
Every other test's group is its module (so a module fixture is made once)."""
BROWSER_GROUP = "browser"
"""The modules with tests that drive Chromium share one browser in one worker."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``external`` what starts a server, cluster, browser or external harness, and ``slow`` the
    modules of ``module_seconds.txt`` that take 5 s or more (``make check`` leaves both to ``make test``);
    a test may also say so itself with ``@pytest.mark.external`` or ``@pytest.mark.slow``. Under
    ``pytest -n N`` the tests that share a server, cluster or browser form one group, and the work is
    handed out slowest first (before xdist reads the groups: ``tryfirst``)."""
    root = Path(str(config.rootpath))
    harness_modules: dict[Path, bool] = {}
    seconds = measured()
    scopes: dict[str, tuple[str, str]] = {}
    browser_modules = {
        item.path for item in items if EXTERNAL_FIXTURES & set(getattr(item, "fixturenames", ()))
    }
    for item in items:
        path = Path(str(item.path))
        relative = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()
        if seconds.get(relative, 0.0) >= SLOW_SECONDS:
            item.add_marker(pytest.mark.slow)
        if path not in harness_modules:
            source = path.read_text(encoding="utf-8", errors="replace")
            harness_modules[path] = any(call in source for call in EXTERNAL_HARNESS_CALLS)
        uses_browser = bool(EXTERNAL_FIXTURES & set(getattr(item, "fixturenames", ())))
        if relative.startswith(EXTERNAL_FOLDERS) or uses_browser or harness_modules[path]:
            item.add_marker(pytest.mark.external)
        group = next((name for folder, name in XDIST_GROUPS.items() if relative.startswith(folder)), None)
        # Without a shared resource a module is its own group: its module fixtures (a model, a build)
        # are made in one worker only.
        group = group or (BROWSER_GROUP if item.path in browser_modules else relative)
        item.add_marker(pytest.mark.xdist_group(group))
        scopes[item.nodeid] = (group, relative)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items[:] = slowest_first(items, scopes, seconds)


def slowest_first(
    items: list[pytest.Item], scopes: dict[str, tuple[str, str]], seconds: dict[str, float]
) -> list[pytest.Item]:
    """The items in falling measured seconds of their scope (a group, else a module: ``scopes`` maps a
    node id to its scope and module), a scope's items kept together and in their order. xdist hands the
    scopes out in this order (``--no-loadscope-reorder``)."""
    modules: dict[str, set[str]] = {}
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        scope, module = scopes[item.nodeid]
        modules.setdefault(scope, set()).add(module)
        first.setdefault(scope, index)
    weight = {scope: sum(seconds.get(module, 0.0) for module in names) for scope, names in modules.items()}
    return sorted(items, key=lambda item: (-weight[scopes[item.nodeid][0]], first[scopes[item.nodeid][0]]))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Under ``--dist loadgroup`` every test must carry its group in its node id (xdist's way of keeping
    a group in one worker); a pytest / pytest-xdist pair that drops it would run the served tests in two
    workers at once, so the run stops here instead."""
    if not (os.environ.get("PYTEST_XDIST_WORKER") and session.config.getvalue("loadgroup")):
        return
    ungrouped = [item.nodeid for item in session.items if "@" not in item.nodeid]
    if ungrouped:
        raise pytest.UsageError(
            f"pytest-xdist did not apply the test groups ({ungrouped[0]} has none) with pytest "
            f"{pytest.__version__}: install the versions pyproject.toml names (make test does)"
        )
