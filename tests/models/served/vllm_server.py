"""A real vLLM server on loopback for the served-backend tests (the library's
:mod:`longread.models.served.vllm_process`, with start failures turned into test failures).

``running_vllm(port, log)`` starts vLLM (CPU) from ``$LONGREAD_VLLM_PYTHON`` (``make test`` sets it to
``<repo>/.venv-vllm/bin/python``), serving longread's SmolLM2 folder as ``smollm2``, waits until
``/v1/models`` answers and kills the whole process group at the end. A missing vLLM is a test FAILURE
naming how to install it, never a skip.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
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

__all__ = ["HOST", "SERVED_NAME", "VLLMServer", "running_vllm", "smollm2_folder"]


class VLLMServer(VLLMProcess):
    def start(self) -> float:
        try:
            return super().start()
        except (VLLMStartError, VLLMNotInstalledError) as exc:
            pytest.fail(str(exc), pytrace=False)


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
