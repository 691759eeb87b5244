"""The fixtures the fault-proxy tests share: a real vLLM on 127.0.0.1 (``upstream``, one for the session:
its start is the slow part) and the fault proxy in front of it (``module_proxy``, one per test module, on
the port the module names in ``PROXY_PORT``). A test that kills the server starts it again before it ends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.models.served.fault_proxy import FaultProxy
from tests.models.served.vllm_server import VLLMServer, running_vllm

UPSTREAM_PORT = 8811


@pytest.fixture(scope="session")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VLLMServer]:
    log = tmp_path_factory.mktemp("vllm") / "vllm.log"
    with running_vllm(UPSTREAM_PORT, log) as server:
        yield server


@pytest.fixture(scope="module")
def module_proxy(request: pytest.FixtureRequest, upstream: VLLMServer) -> Iterator[FaultProxy]:
    with FaultProxy(upstream.root_url, int(request.module.PROXY_PORT)) as running:
        yield running
