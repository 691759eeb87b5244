"""The fixtures the fault-proxy tests share: a real vLLM on 127.0.0.1 (``upstream``) and the fault proxy in
front of it (``module_proxy``), one each per test module, on the ports the module names in ``VLLM_PORT``
and ``PROXY_PORT`` (modules may run side by side, so each keeps its own ports)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.models.served.fault_proxy import FaultProxy
from tests.models.served.vllm_server import VLLMServer, running_vllm


@pytest.fixture(scope="module")
def upstream(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[VLLMServer]:
    log = tmp_path_factory.mktemp("vllm") / "vllm.log"
    with running_vllm(int(request.module.VLLM_PORT), log) as server:
        yield server


@pytest.fixture(scope="module")
def module_proxy(request: pytest.FixtureRequest, upstream: VLLMServer) -> Iterator[FaultProxy]:
    with FaultProxy(upstream.root_url, int(request.module.PROXY_PORT)) as running:
        yield running
