"""The fault-injecting proxy against a real vLLM server on loopback: what passes through equals the
server's own answer, and each fault does what it says."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.models.served import fault_proxy
from tests.models.served.fault_proxy import FaultProxy
from tests.models.served.vllm_server import API_KEY, SERVED_NAME, VLLMServer

PROXY_PORT = 8820
TEXT = "It was a bright cold day in April, and the clocks were striking thirteen."
AUTH = {"Authorization": f"Bearer {API_KEY}"}
"""The server demands its key; the proxy passes the header on as it came."""
MODELS_REQUEST = f"GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {API_KEY}\r\n".encode()
MODELS_REQUEST += b"Content-Length: 0\r\n\r\n"


@pytest.fixture
def proxy(module_proxy: FaultProxy) -> Iterator[FaultProxy]:
    module_proxy.reset()
    yield module_proxy
    module_proxy.reset()


def _score_body(text: str = TEXT) -> dict[str, Any]:
    return {"model": SERVED_NAME, "prompt": text, "echo": True, "logprobs": 1, "max_tokens": 0}


def _post(origin: str, body: dict[str, Any], timeout: float = 60.0) -> httpx.Response:
    return httpx.post(
        f"{origin}/v1/completions",
        content=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **AUTH},
        timeout=timeout,
    )


def _choices(answer: httpx.Response) -> Any:
    assert answer.status_code == 200, answer.text
    return answer.json()["choices"]


def test_pass_through_equals_the_server_itself(upstream: VLLMServer, proxy: FaultProxy) -> None:
    direct = _post(upstream.root_url, _score_body())
    through = _post(proxy.url, _score_body())
    assert _choices(through) == _choices(direct)
    assert len(_choices(direct)[0]["logprobs"]["token_logprobs"]) > 10
    models = httpx.get(f"{proxy.url}/v1/models", headers=AUTH, timeout=30).json()
    assert [model["id"] for model in models["data"]] == [SERVED_NAME]
    seen = proxy.seen()
    assert [(s.index, s.method, s.path, s.fault, s.status) for s in seen] == [
        (0, "POST", "/v1/completions", None, 200),
        (1, "GET", "/v1/models", None, 200),
    ]
    assert seen[0].body_size == len(json.dumps(_score_body()).encode())


@pytest.mark.parametrize("code", [500, 503])
def test_server_errors_never_reach_the_server(proxy: FaultProxy, code: int) -> None:
    proxy.fail(fault_proxy.status(code), index=0)
    first = _post(proxy.url, _score_body())
    assert first.status_code == code
    assert "injected" in first.json()["error"]["message"]
    assert "retry-after" not in first.headers
    assert _post(proxy.url, _score_body()).status_code == 200, "a rule applies once by default"
    assert [(s.fault, s.status) for s in proxy.seen()] == [(f"status {code}", code), (None, 200)]


def test_too_many_requests_carries_retry_after(proxy: FaultProxy) -> None:
    proxy.fail(fault_proxy.too_many_requests(retry_after=2), times=2)
    answers = [_post(proxy.url, _score_body()) for _ in range(3)]
    assert [a.status_code for a in answers] == [429, 429, 200]
    assert answers[0].headers["retry-after"] == "2"
    seen = proxy.seen()
    assert len({s.body_digest for s in seen}) == 1, "the same request seen three times"


def test_hang_lasts_until_the_client_gives_up_or_the_cap(proxy: FaultProxy) -> None:
    """Lower bounds only: the proxy decides what hangs, the machine's speed decides nothing here."""
    proxy.fail(fault_proxy.hang(600.0))
    started = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        _post(proxy.url, _score_body(), timeout=0.5)
    assert time.monotonic() - started >= 0.45
    # The client left, so the proxy ended the hang at once (far before its cap) and recorded why.
    (hung,) = proxy.seen(timeout=60)
    assert hung.fault == "hang 600s" and hung.client_left and hung.status is None
    with socket.create_connection(("127.0.0.1", PROXY_PORT), timeout=60) as raw:
        raw.sendall(MODELS_REQUEST)
        assert b"200 OK" in raw.recv(4096), "the next request passes"
    # A client that waits on: the proxy closes the connection without an answer once the cap passes.
    proxy.fail(fault_proxy.hang(1.0))
    with socket.create_connection(("127.0.0.1", PROXY_PORT), timeout=120) as raw:
        started = time.monotonic()
        raw.sendall(MODELS_REQUEST)
        assert raw.recv(4096) == b"", "closed without an answer"
        assert time.monotonic() - started >= 0.95
    seen = proxy.seen()
    expected = [("hang 600s", True), (None, False), ("hang 1s", False)]
    assert [(s.fault, s.client_left) for s in seen] == expected


def test_an_answer_the_client_did_not_wait_for_is_slow(upstream: VLLMServer, proxy: FaultProxy) -> None:
    """The proxy tells a late healthy answer (the client had left) from one that was delivered."""
    proxy.on_arrival(lambda index, path, body: time.sleep(1.0) if index == 0 else None)
    with pytest.raises(httpx.ReadTimeout):
        _post(proxy.url, _score_body(), timeout=0.2)
    assert _post(proxy.url, _score_body()).status_code == 200
    late, delivered = proxy.seen(timeout=60)
    assert (late.fault, late.client_left, late.slow_answer) == (None, True, True)
    assert (delivered.client_left, delivered.slow_answer) == (False, False)
    assert fault_proxy.fault_tries([late, delivered]) == [delivered]


def test_malformed_json_is_a_cut_real_answer(upstream: VLLMServer, proxy: FaultProxy) -> None:
    proxy.fail(fault_proxy.malformed())
    answer = _post(proxy.url, _score_body())
    assert answer.status_code == 200
    with pytest.raises(ValueError):
        json.loads(answer.content)
    assert answer.content.startswith(b'{"id":'), answer.content[:40]


def test_missing_and_short_logprobs(upstream: VLLMServer, proxy: FaultProxy) -> None:
    direct = _choices(_post(upstream.root_url, _score_body()))[0]["logprobs"]
    proxy.fail(fault_proxy.missing_logprobs())
    proxy.fail(fault_proxy.short_logprobs())
    missing = _choices(_post(proxy.url, _score_body()))
    assert missing[0]["logprobs"] is None
    short = _choices(_post(proxy.url, _score_body()))[0]["logprobs"]
    assert short["token_logprobs"] == direct["token_logprobs"][:-1]
    assert short["tokens"] == direct["tokens"][:-1]
    with_prompt_logprobs = _score_body() | {"prompt_logprobs": 0}
    proxy.fail(fault_proxy.missing_logprobs())
    assert _choices(_post(proxy.url, with_prompt_logprobs))[0]["prompt_logprobs"] is None
    proxy.fail(fault_proxy.short_logprobs())
    whole = _choices(_post(upstream.root_url, with_prompt_logprobs))[0]["prompt_logprobs"]
    assert _choices(_post(proxy.url, with_prompt_logprobs))[0]["prompt_logprobs"] == whole[:-1]


def test_drop_closes_without_an_answer(proxy: FaultProxy) -> None:
    proxy.fail(fault_proxy.drop())
    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
        _post(proxy.url, _score_body())
    assert proxy.seen()[0].status is None and proxy.seen()[0].fault == "drop"


def test_rules_match_by_index_path_and_body(proxy: FaultProxy) -> None:
    proxy.fail(fault_proxy.status(503), path="/v1/models", times=None)
    proxy.fail(fault_proxy.status(500), when=lambda body: "thirteen" in str(body and body.get("prompt")))
    proxy.fail(fault_proxy.status(502), index=3)
    assert httpx.get(f"{proxy.url}/v1/models", headers=AUTH, timeout=30).status_code == 503
    assert _post(proxy.url, _score_body("A plain sentence.")).status_code == 200
    assert _post(proxy.url, _score_body()).status_code == 500
    assert _post(proxy.url, _score_body()).status_code == 502, "request 3, the body rule used up"
    models = httpx.get(f"{proxy.url}/v1/models", headers=AUTH, timeout=30)
    assert models.status_code == 503, "times=None: every time"
    assert [s.status for s in proxy.seen()] == [503, 200, 500, 502, 503]


def test_a_pinned_rule_fails_one_body_every_time(proxy: FaultProxy) -> None:
    proxy.fail(fault_proxy.status(500), path="/v1/completions", times=None, pin_body=True)
    assert _post(proxy.url, _score_body("First body.")).status_code == 500
    assert _post(proxy.url, _score_body("Second body.")).status_code == 200
    assert _post(proxy.url, _score_body("First body.")).status_code == 500
    assert [s.status for s in proxy.seen()] == [500, 200, 500]


def test_hook_at_request_n_and_a_server_that_is_gone(upstream: VLLMServer, proxy: FaultProxy) -> None:
    calls: list[tuple[int, str]] = []
    proxy.on_arrival(lambda index, path, body: calls.append((index, path)))
    proxy.on_arrival(lambda index, path, body: proxy.refuse_connections() if index == 1 else None)
    with httpx.Client(timeout=30, headers=AUTH) as client:
        assert client.post(f"{proxy.url}/v1/completions", json=_score_body()).status_code == 200
        # Request 1 still goes through on the open connection; new connections are refused after it.
        assert client.post(f"{proxy.url}/v1/completions", json=_score_body()).status_code == 200
    with pytest.raises(httpx.ConnectError):
        _post(proxy.url, _score_body())
    proxy.accept_connections()
    assert _post(proxy.url, _score_body()).status_code == 200
    assert calls == [(0, "/v1/completions"), (1, "/v1/completions"), (2, "/v1/completions")]


def test_an_unreachable_upstream_drops_the_client() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free_port = probe.getsockname()[1]
    with FaultProxy(f"http://127.0.0.1:{free_port}", PROXY_PORT + 1) as lonely:
        with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
            _post(lonely.url, _score_body())
        assert [s.status for s in lonely.seen()] == [None]


@pytest.mark.parametrize(
    "upstream_url",
    ["http://10.0.0.1:8000", "http://localhost:8000", "https://127.0.0.1:8000", "http://0.0.0.0:80"],
)
def test_only_a_loopback_upstream_is_accepted(upstream_url: str) -> None:
    with pytest.raises(ValueError, match=r"only http://127\.0\.0\.1:PORT"):
        FaultProxy(upstream_url, PROXY_PORT + 2)
