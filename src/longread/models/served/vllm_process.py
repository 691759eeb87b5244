"""A vLLM (CPU) server on 127.0.0.1 as a child process: for the served-backend tests, the bench, and anyone
who wants longread to start a local server.

The python comes from ``$LONGREAD_VLLM_PYTHON``, else ``<repo>/.venv-vllm/bin/python`` (``make vllm``),
else ``/tmp/vllm-venv/bin/python``. The server serves longread's SmolLM2 folder (the dequantised GGUF
cache) unless told another, in float32 with ``--enforce-eager`` (OFFLINE.md's verified recipe), with usage
statistics off; it is started in its own process group under :mod:`longread.processes.guard`, waited for
with a deadline (``/v1/models``), and killed by that group — SIGTERM, then SIGKILL — so vLLM's engine-core
worker goes too. The guard ends the server's whole tree when the process that started it ends, however it
ends (SIGKILL included). Only 127.0.0.1.
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
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from longread.errors import LongreadError
from longread.processes.guard import guarded_command

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
_METRIC_LINE = re.compile(r"^(vllm:[A-Za-z0-9_:]+?)(?:\{[^}]*\})?\s+([-+0-9.eEinfINFaN]+)\s*$")
_REPO = Path(__file__).resolve().parents[4]


class VLLMNotInstalledError(LongreadError):
    pass


class VLLMStartError(LongreadError):
    pass


def vllm_python(repo: Path = _REPO) -> Path:
    """The python of a venv with vLLM installed; a clear error saying how to get one otherwise."""
    named = os.environ.get("LONGREAD_VLLM_PYTHON")
    candidates = (
        [Path(named)]
        if named
        else [repo / ".venv-vllm" / "bin" / "python", Path("/tmp/vllm-venv/bin/python")]
    )
    for candidate in candidates:
        if candidate.exists() and any(candidate.parent.parent.glob("lib/python3*/site-packages/vllm")):
            return candidate
    raise VLLMNotInstalledError(
        f"no python with vLLM installed at {', '.join(map(str, candidates))}: run `make vllm` (or `make "
        "test`, which installs vLLM CPU into .venv-vllm), or set LONGREAD_VLLM_PYTHON to such a python"
    )


def smollm2_folder() -> Path:
    """longread's SmolLM2 HF folder (built from the shipped GGUF on first use) — what vLLM serves."""
    from longread.models.hf import loading

    loading.smollm2_tokenizer()  # builds the cache folder if it is not there yet
    return loading.gguf_cache_folder(loading.smollm2_gguf_path(), "smollm2")


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        return probe.connect_ex((HOST, port)) != 0


def group_cpu_seconds(pgid: int) -> float:
    """User + system CPU seconds of every live process in process group ``pgid``."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # after the command: state ppid pgrp … utime(11) stime(12)
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


@dataclass
class VLLMProcess:
    port: int
    log: Path
    served_name: str = SERVED_NAME
    model_folder: Path | None = None
    """Default: longread's SmolLM2 folder."""
    extra_args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    """Added to the server's environment (e.g. ``{"VLLM_API_KEY": …}``)."""
    max_model_len: int = 4096
    ready_deadline_s: float = READY_DEADLINE_S
    python: Path | None = None
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def root_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def base_url(self) -> str:
        """What ``openai:`` specs take: the URL up to ``/v1``."""
        return f"{self.root_url}/v1"

    @property
    def pid(self) -> int:
        assert self.process is not None, "the server is not running"
        return self.process.pid

    def spec(self, query: str = "") -> str:
        """``openai:http://127.0.0.1:PORT/v1#smollm2`` (``query``: ``tokenizer=…&concurrency=…``)."""
        return f"openai:{self.base_url}#{self.served_name}" + (f"?{query}" if query else "")

    def command(self) -> list[str]:
        folder = self.model_folder or smollm2_folder()
        return [
            str(self.python or vllm_python()), "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(folder),
            "--served-model-name", self.served_name, "--host", HOST, "--port", str(self.port),
            "--max-model-len", str(self.max_model_len), "--dtype", "float32", "--enforce-eager",
            *self.extra_args,
        ]  # fmt: skip

    def start(self) -> float:
        """Start and wait until ``/v1/models`` answers; returns the seconds it took. A server that dies
        or is late is a :class:`VLLMStartError` with its log's tail."""
        if not port_is_free(self.port):
            raise VLLMStartError(
                f"port {self.port} on {HOST} is taken; stop what listens there or pick another"
            )
        command = self.command()
        started = time.perf_counter()
        with self.log.open("ab") as log:
            log.write(f"\n==== {' '.join(command)}\n".encode())
            self.process = subprocess.Popen(
                guarded_command(command, grace_s=STOP_GRACE_S),
                stdout=log,
                stderr=log,
                env=os.environ | SERVER_ENV | dict(self.env),
                start_new_session=True,
            )
        deadline = time.monotonic() + self.ready_deadline_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code, self.process = self.process.returncode, None
                raise VLLMStartError(
                    f"vLLM exited with {code} while starting; its log ({self.log}):\n{self.log_tail()}"
                )
            if self._get("/v1/models") is not None:
                return time.perf_counter() - started
            time.sleep(0.5)
        self.kill()
        raise VLLMStartError(
            f"vLLM was not ready within {self.ready_deadline_s:g} s; its log:\n{self.log_tail()}"
        )

    def _get(self, path: str) -> str | None:
        key = self.env.get("VLLM_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        try:
            request = urllib.request.Request(self.root_url + path, headers=headers)
            with urllib.request.urlopen(request, timeout=5) as response:
                return str(response.read().decode()) if response.status == 200 else None
        except (urllib.error.URLError, OSError):
            return None

    def metrics(self) -> dict[str, float]:
        """The ``vllm:*`` samples of ``/metrics`` summed over label sets (empty if it does not answer)."""
        values: dict[str, float] = {}
        for line in (self._get("/metrics") or "").splitlines():
            match = _METRIC_LINE.match(line)
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

    def kill(self, *, graceful: bool = True) -> None:
        """End the whole process group: SIGTERM then SIGKILL after a grace period (``graceful=False``:
        SIGKILL at once, as a crash); then SIGKILL whatever of the group is left (the engine core)."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM if graceful else signal.SIGKILL)
                process.wait(timeout=STOP_GRACE_S + 10 if graceful else 30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            except ProcessLookupError:
                pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


@contextmanager
def running_vllm_process(server: VLLMProcess) -> Iterator[VLLMProcess]:
    """``server`` started for the ``with`` block and killed after it, whatever happens."""
    server.start()
    try:
        yield server
    finally:
        server.kill()
