"""Parents for the process-lifetime tests: ``python -m tests.processes.parents MODE READY ARGS…`` starts
what MODE names the way longread or its tests start it, writes READY once it all runs, then waits to be
killed. Python's default SIGTERM ends it at once, without cleanup — the hard case: nothing of the parent
runs, only what the children were given at start makes them go.

- ``tree``: a shell under :mod:`longread.processes.guard` (its own process group) with two sleeping
  children, one of which leaves the group with ``setsid`` (as a server's helper might);
- ``vllm PORT LOG``: a real vLLM server (:class:`VLLMProcess`, SmolLM2), ready when ``/v1/models`` answers;
- ``ray``: ``ray start --head --block`` in namespaces of its own, as the Ray tests start a cluster; ready
  when the raylet runs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from longread.processes.guard import guarded_command
from longread.processes.lifetime import dying_with_parent
from longread.processes.tree import descendants
from tests.helpers import REPO_ROOT, own_network_command


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def wait_for(condition_met: object, deadline_s: float = 300.0) -> None:
    """Poll until ``condition_met()``; the deadline only guards against a hung start."""
    deadline = time.monotonic() + deadline_s
    while not condition_met():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise SystemExit(f"not ready within {deadline_s:g} s")
        time.sleep(0.2)


def start_tree() -> None:
    script = "sleep 600 & setsid sleep 600 & wait"
    subprocess.Popen(guarded_command(["sh", "-c", script], grace_s=5), start_new_session=True)
    wait_for(lambda: sum(command_line(pid).split() == ["sleep", "600"] for pid in descendants_of_me()) == 2)


def start_vllm(port: int, log: Path) -> None:
    from longread.models.served.vllm_process import VLLMProcess

    VLLMProcess(port, log, max_model_len=1024).start()


def start_ray() -> None:
    ray = Path(sys.executable).parent / "ray"
    argv = [str(ray), "start", "--head", "--block", "--num-cpus", "1", "--include-dashboard", "false"]
    env = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
    subprocess.Popen(
        own_network_command(argv), cwd=REPO_ROOT, env=os.environ | env, preexec_fn=dying_with_parent()
    )
    wait_for(lambda: any("raylet" in command_line(pid) for pid in descendants_of_me()))


def descendants_of_me() -> list[int]:
    return descendants(os.getpid())


if __name__ == "__main__":
    mode, ready = sys.argv[1], Path(sys.argv[2])
    if mode == "tree":
        start_tree()
    elif mode == "vllm":
        start_vllm(int(sys.argv[3]), Path(sys.argv[4]))
    elif mode == "ray":
        start_ray()
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    ready.write_text("ready")
    while True:
        signal.pause()
