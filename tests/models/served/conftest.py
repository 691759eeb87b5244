"""The fixtures the fault-proxy tests share: the session's vLLM (``upstream``, the ``vllm`` fixture of
``tests/conftest.py``) and the fault proxy in front of it (``module_proxy``, one per test module, on the
port the module names in ``PROXY_PORT``), with the server's key in ``OPENAI_API_KEY`` for the module's
clients. A test that kills the server starts it again before it ends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.models.served.fault_proxy import FaultProxy
from tests.models.served.vllm_server import VLLMServer, key_in_environment


@pytest.fixture(scope="module")
def upstream(vllm: VLLMServer) -> VLLMServer:
    return vllm


@pytest.fixture(scope="module")
def module_proxy(request: pytest.FixtureRequest, upstream: VLLMServer) -> Iterator[FaultProxy]:
    with key_in_environment(), FaultProxy(upstream.root_url, int(request.module.PROXY_PORT)) as running:
        yield running
