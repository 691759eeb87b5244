"""What longread and its tests start ends with its parent, however the parent ends.

Each test starts a parent in a subprocess (``tests/processes/parents.py``, or the real ``longread``
command), waits until what it starts runs, notes every process of the tree by pid and command line,
kills the parent with SIGTERM or SIGKILL, and asserts that no process of the tree is left (and, for
the server, that nothing listens on its port). The waits are liveness bounds, never speed bounds: they
only fail when something is really left behind.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from longread.processes.tree import descendants, is_alive, listening_ports
from tests.helpers import GUTENBERG, REPO_ROOT, needs_shared, require_ray
from tests.processes.parents import command_line

LEFT_BEHIND_DEADLINE_S = 90.0
"""How long the tree may take to go after its parent is killed (a guard's grace is 15 s at most)."""
VLLM_PORT = 18431


def start_parent(*args: str, ready: Path) -> subprocess.Popen[bytes]:
    """``python -m tests.processes.parents ARGS`` (``ARGS[1]`` is ``ready``), waited until ready."""
    parent = subprocess.Popen(
        [sys.executable, "-m", "tests.processes.parents", *args], cwd=REPO_ROOT, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 600
    while not ready.exists():
        if parent.poll() is not None or time.monotonic() > deadline:
            parent.kill()
            _, stderr = parent.communicate()
            pytest.fail(f"the parent did not get ready (exit {parent.returncode}): {stderr.decode()[-3000:]}")
        time.sleep(0.2)
    return parent


def tree_of(pid: int) -> dict[int, str]:
    """Every process below ``pid``, by pid, with its command line (to tell a reused pid apart)."""
    return {child: command_line(child) for child in descendants(pid)}


def left_behind(tree: dict[int, str]) -> dict[int, str]:
    """The processes of ``tree`` still running once they had the deadline to go."""
    deadline = time.monotonic() + LEFT_BEHIND_DEADLINE_S
    while True:
        left = {pid: line for pid, line in tree.items() if is_alive(pid) and command_line(pid) == line}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def kill_and_collect(parent: subprocess.Popen[bytes], signum: int) -> dict[int, str]:
    tree = tree_of(parent.pid)
    parent.send_signal(signum)
    parent.wait(timeout=60)
    assert parent.returncode == -signum
    return tree


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_guarded_tree_ends_with_its_parent_even_what_left_the_group(signum: int, tmp_path: Path) -> None:
    parent = start_parent("tree", str(tmp_path / "ready"), ready=tmp_path / "ready")
    tree = kill_and_collect(parent, signum)
    # the guard, its shell, the two sleeps (one in a session of its own)
    assert sum(line.split() == ["sleep", "600"] for line in tree.values()) == 2 and len(tree) == 4, tree
    assert not left_behind(tree)


ONE_SIGNAL = pytest.mark.parametrize("signum", [signal.SIGKILL], ids=["SIGKILL"])
"""The vLLM server and the Ray cluster (each ~35 s of CPU to start) are killed one way only: the parent runs
no code under either signal (Python's default SIGTERM ends it at once), so what reaches the guard is the same
parent death; the guarded tree above is killed both ways."""


@pytest.mark.external
@ONE_SIGNAL
def test_a_vllm_server_ends_with_the_process_that_started_it(signum: int, tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    parent = start_parent("vllm", str(ready), str(VLLM_PORT), str(tmp_path / "vllm.log"), ready=ready)
    assert VLLM_PORT in listening_ports()
    tree = kill_and_collect(parent, signum)
    assert any("vllm" in line for line in tree.values()) and len(tree) >= 3, tree  # guard, API, engine
    assert not left_behind(tree)
    assert VLLM_PORT not in listening_ports()


@pytest.mark.external
@ONE_SIGNAL
def test_a_ray_cluster_started_by_the_tests_ends_with_its_parent(signum: int, tmp_path: Path) -> None:
    require_ray()
    parent = start_parent("ray", str(tmp_path / "ready"), ready=tmp_path / "ready")
    tree = kill_and_collect(parent, signum)
    assert any("raylet" in line for line in tree.values()) and any(
        "gcs_server" in line for line in tree.values()
    )
    assert not left_behind(tree)


@needs_shared
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_builds_worker_pool_ends_with_the_command(signum: int, tmp_path: Path) -> None:
    out = tmp_path / "cb.jsonl"
    command = [
        sys.executable, "-m", "longread.cli", "build", "chapterbreak", str(GUTENBERG), "--out", str(out),
        "--workers", "2",
    ]  # fmt: skip
    build = subprocess.Popen(command, cwd=REPO_ROOT, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while len(descendants(build.pid)) < 2:  # both workers forked
        assert build.poll() is None and time.monotonic() < deadline, "the build ended before its pool ran"
        time.sleep(0.05)
    tree = tree_of(build.pid)
    build.send_signal(signum)
    _, stderr = build.communicate(timeout=120)
    if signum == signal.SIGTERM:  # caught: the pool is terminated and the command says so
        assert build.returncode == 128 + signum and b"interrupted (SIGTERM)" in stderr, stderr[-2000:]
    else:
        assert build.returncode == -signum
    assert len(tree) >= 2 and not left_behind(tree)
    assert not out.exists()  # written atomically: nothing half
