"""What every test shares: a process the tests start ends when the test session ends, however it ends.

``subprocess.Popen`` (and so ``subprocess.run`` and asyncio's subprocesses) gets the kernel's
parent-death signal for the children the tests start, unless a test asks for its own ``preexec_fn``: a
``longread`` command, an ``unshare`` holding a Ray cluster or Playwright's driver is SIGKILLed when the
pytest process ends — killed by ``timeout``, Ctrl-C or SIGKILL included. What those start in turn is
ended by their own means (the vLLM guard, the Ray namespace's ``--kill-child``, the pool's initializer).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from longread.processes.lifetime import dying_with_parent
from tests.models.served.vllm_server import SHARED, VLLMServer
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
EXTERNAL_FIXTURES = {"browser", "vllm"}
"""A test that takes one of these drives headless Chromium or the session's vLLM server."""
EXTERNAL_HARNESS_CALLS = ("simple_evaluate", "inspect_ai")
"""A test module that calls these runs lm-evaluation-harness or inspect_ai."""
SERVERS_LANE = (
    *EXTERNAL_FOLDERS,
    "tests/processes/test_lifetime.py",
    "tests/test_wheel.py",
    "tests/cli/test_presses.py",
)
"""Modules (with those that use the session's vLLM) that mostly wait on processes of their own: marked
``servers``, they run in a lane of their own beside the rest (``tests/lanes.py``, ``make test``)."""
BALANCE = (
    "tests/export/test_narrativexl_lm_eval.py",
    "tests/export/test_narrativexl_summaries.py",
    "tests/export/test_muld_style.py",
    "tests/horizon/test_campaign.py",
    "tests/horizon/test_narrativexl.py",
)
"""Model-heavy modules run in the servers lane too, so the lanes end together (measured on fresh clones:
with the first two there, the main lane ended ~60 s after the servers lane once the presses' commands
were forked from one server; the MuLD style comparison, ~30 s in the suite, moves that half of it; with
the horizon campaign added to the main lane it ended 9.5 min after the servers lane — 38.0 against 28.5
min, stop 58 — and the campaign, ~3.5 min with its setup, moves here, as does the NarrativeXL campaign,
~3.4 min, stop 59)."""


SERVER_FIXTURE = "vllm"


@pytest.fixture(scope="module")
def vllm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VLLMServer]:
    """The session's one vLLM server (``tests/models/served/vllm_server.py``): it demands its key
    (``API_KEY`` there) and takes a chat template in a request. Started by the first module that asks."""
    yield SHARED.running(tmp_path_factory.getbasetemp() / "vllm")


def _server_modules_together(items: list[pytest.Item]) -> None:
    """The modules whose tests use the shared vLLM, moved (in their order) to where the first of them
    stands, so the server is started once and stopped after the last of them."""
    users = {item.path for item in items if _uses_server(item)}
    if not users:
        return
    first = next(i for i, item in enumerate(items) if item.path in users)
    moved = [item for item in items if item.path in users]
    rest = [item for item in items if item.path not in users]
    items[:] = rest[:first] + moved + rest[first:]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Stop the shared vLLM once the last test that uses it has torn down (it holds ~3.6 GB)."""
    yield
    if _uses_server(item) and not (nextitem is not None and _uses_server(nextitem)):
        items = item.session.items
        if not any(_uses_server(later) for later in items[items.index(item) + 1 :]):
            SHARED.stop()


def _uses_server(item: pytest.Item) -> bool:
    return SERVER_FIXTURE in getattr(item, "fixturenames", ())


def pytest_sessionfinish(session: pytest.Session) -> None:
    SHARED.stop()  # a run stopped early (-x, a failed fixture) leaves no server either


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``external`` what starts a server, cluster, browser or external harness, and ``slow`` the
    modules of ``module_seconds.txt`` that take 5 s or more (``make check`` leaves both to ``make test``);
    a test may also say so itself with ``@pytest.mark.external`` or ``@pytest.mark.slow``."""
    root = Path(str(config.rootpath))
    harness_modules: dict[Path, bool] = {}
    seconds = measured()
    for item in items:
        path = Path(str(item.path))
        relative = _relative(item, root)
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
    _server_modules_together(items)
    server_modules = {item.path for item in items if _uses_server(item)}
    for item in items:
        if _relative(item, root).startswith((*SERVERS_LANE, *BALANCE)) or item.path in server_modules:
            item.add_marker(pytest.mark.servers)


def _relative(item: pytest.Item, root: Path) -> str:
    path = Path(str(item.path))
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()
