"""A real vLLM server on loopback for the served-backend tests (the library's
:mod:`longread.models.served.vllm_process`, with start failures turned into test failures).

One server serves the whole session (``SHARED``, the ``vllm`` fixture of ``tests/conftest.py``): vLLM
(CPU) from ``$LONGREAD_VLLM_PYTHON`` (``make test`` sets it to ``<repo>/.venv-vllm/bin/python``), serving
longread's SmolLM2 folder as ``smollm2`` on ``SHARED_PORT``. It demands ``API_KEY`` (every client of it
sends the key, as clients of a real deployment do) and takes a chat template in a request (inspect_ai
sends one). Its start is the slow part (~30-60 s, ~3.6 GB), so the modules that use it run one after the
other and the server is stopped after the last of their tests. A missing vLLM is a test FAILURE naming
how to install it, never a skip.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from longread.models.served.vllm_process import (
    HOST,
    SERVED_NAME,
    VLLMNotInstalledError,
    VLLMProcess,
    VLLMStartError,
    smollm2_folder,
)

__all__ = [
    "API_KEY",
    "HOST",
    "SERVED_NAME",
    "SHARED",
    "VLLMServer",
    "key_in_environment",
    "smollm2_folder",
]

SHARED_PORT = 8801
API_KEY = f"lr-served-test-{secrets.token_hex(12)}"
"""Distinctive, so any leak is found by a plain substring search."""
KEY_VARIABLE = "OPENAI_API_KEY"
"""Where ``openai:`` specs read the key from by default."""


class VLLMServer(VLLMProcess):
    def start(self) -> float:
        try:
            return super().start()
        except (VLLMStartError, VLLMNotInstalledError) as exc:
            pytest.fail(str(exc), pytrace=False)


class SharedServer:
    """The session's one server: started by the first module that asks, started again if a test left it
    down (a test that kills it restarts it itself), stopped by ``stop`` after the last test using it."""

    def __init__(self) -> None:
        self.server: VLLMServer | None = None

    def running(self, log_dir: Path) -> VLLMServer:
        if self.server is None:
            log_dir.mkdir(parents=True, exist_ok=True)
            self.server = VLLMServer(
                SHARED_PORT,
                log_dir / "vllm.log",
                extra_args=("--trust-request-chat-template",),
                env={"VLLM_API_KEY": API_KEY},
                max_model_len=4096,
            )
        if self.server.process is None or self.server.process.poll() is not None:
            self.server.process = None
            self.server.start()
        return self.server

    def stop(self) -> None:
        if self.server is not None:
            self.server.kill()


SHARED = SharedServer()


@contextmanager
def key_in_environment() -> Iterator[None]:
    """``OPENAI_API_KEY`` set to the shared server's key for the block, restored after it."""
    before = os.environ.get(KEY_VARIABLE)
    os.environ[KEY_VARIABLE] = API_KEY
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(KEY_VARIABLE, None)
        else:
            os.environ[KEY_VARIABLE] = before
