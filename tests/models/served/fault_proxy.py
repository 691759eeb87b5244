"""A fault-injecting HTTP proxy for tests: it stands between a served-model client and a real server.

It listens on 127.0.0.1 and forwards every request to an upstream that must be on 127.0.0.1 too (a test
never talks to anything else). A *fault plan* set by the test decides, per request, whether the request
goes through untouched or is answered with a fault instead:

- ``status(500)`` / ``status(503)`` / ``too_many_requests(retry_after=N)``: an error answer, the request
  never reaches the server;
- ``hang(seconds)``: no answer until the client gives up and closes the connection, or ``seconds`` pass
  (then the proxy closes it). Whether a request hung is decided here, not by a race between the client's
  timeout and the server's speed: a test that stands for a hang gives a cap far above any client timeout;
- ``malformed()``: the server's real answer cut in half, sent as a 200 with a matching Content-Length;
- ``missing_logprobs()`` / ``short_logprobs()``: the server's real answer with every choice's
  ``logprobs`` (and vLLM's ``prompt_logprobs``) set to null, or their arrays one entry short;
- ``drop()``: the connection closed without an answer.

A rule (:meth:`FaultProxy.fail`) matches a request by its index, path or a predicate on its JSON body,
and applies a number of times. Every request is recorded (:class:`SeenRequest`) so a test can assert
retries (the same body seen again) and waits (``Retry-After``). A hook on arrival lets a test act at
request N (kill the upstream); :meth:`FaultProxy.refuse_connections` then makes the proxy look like a
server that is gone, :meth:`FaultProxy.accept_connections` brings it back on the same port.

A slow machine answers late. The proxy tells a late answer apart from a fault: a healthy answer whose
client had already given up (closed its connection) is recorded with ``client_left=True``, so a test can
count the client's retries of slow answers apart from the retries its faults caused (:func:`fault_tries`).
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

LOOPBACK = "127.0.0.1"
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "host", "content-length", "proxy-connection"}
UPSTREAM_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Fault:
    """What the proxy does instead of (or to) the server's answer."""

    kind: str
    status: int = 200
    retry_after: float | None = None
    seconds: float = 0.0

    @property
    def label(self) -> str:
        """How the record names it: ``status 429 retry-after 2``, ``hang 5s``, ``malformed`` …"""
        if self.kind == "status":
            after = f" retry-after {self.retry_after:g}" if self.retry_after is not None else ""
            return f"status {self.status}{after}"
        if self.kind == "hang":
            return f"hang {self.seconds:g}s"
        return self.kind


def status(code: int, *, retry_after: float | None = None) -> Fault:
    """Answer ``code`` with an OpenAI-style JSON error body (and ``Retry-After`` if given)."""
    return Fault("status", status=code, retry_after=retry_after)


def too_many_requests(retry_after: float) -> Fault:
    return status(429, retry_after=retry_after)


def hang(seconds: float) -> Fault:
    return Fault("hang", seconds=seconds)


def malformed() -> Fault:
    return Fault("malformed")


def missing_logprobs() -> Fault:
    return Fault("missing_logprobs")


def short_logprobs() -> Fault:
    return Fault("short_logprobs")


def drop() -> Fault:
    return Fault("drop")


@dataclass(frozen=True)
class SeenRequest:
    """One request as the proxy saw it; ``status`` is what the client got (None: no answer at all)."""

    index: int
    method: str
    path: str
    body_size: int
    body_digest: str
    arrived: float
    ended: float
    fault: str | None
    status: int | None
    client_left: bool = False

    @property
    def slow_answer(self) -> bool:
        """A healthy answer the client did not wait for: its timeout ran out first (a slow machine)."""
        return self.fault is None and self.client_left


def fault_tries(tries: list[SeenRequest]) -> list[SeenRequest]:
    """The tries of one request without those the client gave up on because the server was slow.

    On a slow machine a healthy answer may outlast the client's timeout; the client then asks again. Those
    retries are the machine's, not a fault's, and the proxy knows which they are (``slow_answer``).
    """
    return [t for t in tries if not t.slow_answer]


@dataclass
class _Rule:
    fault: Fault
    matches: Callable[[int, str, bytes, Any, bool], bool]
    times: int | None
    used: int = 0


@dataclass
class _State:
    rules: list[_Rule] = field(default_factory=list)
    seen: list[SeenRequest] = field(default_factory=list)
    arrivals: int = 0
    bodies: set[bytes] = field(default_factory=set)
    hooks: list[Callable[[int, str, Any], None]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)


def _loopback_origin(base_url: str) -> tuple[str, int]:
    parts = urlsplit(base_url)
    if parts.scheme != "http" or parts.hostname != LOOPBACK or parts.port is None:
        raise ValueError(
            f"fault proxy: upstream {base_url!r} refused — only http://{LOOPBACK}:PORT is allowed"
        )
    if parts.path not in ("", "/"):
        raise ValueError(f"fault proxy: give the upstream's origin without a path, not {base_url!r}")
    return LOOPBACK, parts.port


class FaultProxy:
    """A threaded proxy on ``127.0.0.1:port`` in front of ``upstream`` (``http://127.0.0.1:N``)."""

    def __init__(self, upstream: str, port: int) -> None:
        self.upstream_host, self.upstream_port = _loopback_origin(upstream)
        self.port = port
        self._state = _State()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The proxy's origin; a client's OpenAI base URL is ``url + "/v1"``."""
        return f"http://{LOOPBACK}:{self.port}"

    # -- the plan ---------------------------------------------------------------------------------------

    def fail(
        self,
        fault: Fault,
        *,
        index: int | None = None,
        path: str | None = None,
        when: Callable[[Any], bool] | None = None,
        times: int | None = 1,
        pin_body: bool = False,
        new_body: bool = False,
    ) -> None:
        """Apply ``fault`` to the next ``times`` requests (None: every one) matching all given conditions.

        ``index`` is the request's arrival number counted from 0 since the proxy started (or since
        :meth:`reset`); ``when`` gets the parsed JSON body (None when it is not JSON). With
        ``pin_body`` the rule takes the first request it matches and from then on matches only
        requests with that very body: the same request failing on every retry, its neighbours not.
        With ``new_body`` it matches only a body the proxy has not seen before (not a retry), so
        several rules each take a request of their own.
        Rules are tried in the order they were given; the first that matches applies.
        """
        pinned: list[bytes] = []

        def matches(arrival: int, request_path: str, raw: bytes, body: Any, fresh: bool) -> bool:
            if pinned:
                return raw == pinned[0]
            hit = (
                (fresh or not new_body)
                and (index is None or arrival == index)
                and (path is None or request_path == path)
                and (when is None or bool(when(body)))
            )
            if hit and pin_body:
                pinned.append(raw)
            return hit

        with self._state.lock:
            self._state.rules.append(_Rule(fault, matches, times))

    def on_arrival(self, hook: Callable[[int, str, Any], None]) -> None:
        """Call ``hook(index, path, body)`` in the handling thread when a request arrives, before anything."""
        with self._state.lock:
            self._state.hooks.append(hook)

    def reset(self) -> None:
        """No faults, no hooks, no record; request indices count from 0 again (open requests end first)."""
        self.seen()
        with self._state.lock:
            self._state.rules.clear()
            self._state.hooks.clear()
            self._state.seen.clear()
            self._state.bodies.clear()
            self._state.arrivals = 0

    def seen(self, timeout: float = 30.0) -> list[SeenRequest]:
        """Every request so far by arrival, once all that arrived have ended (a hang is waited for).

        Waiting matters even without hangs: a client can read an answer before the proxy's thread has
        recorded it.
        """
        deadline = time.monotonic() + timeout
        while True:
            with self._state.lock:
                if len(self._state.seen) >= self._state.arrivals:
                    return sorted(self._state.seen, key=lambda seen: seen.index)
            if time.monotonic() > deadline:
                raise AssertionError(f"fault proxy: requests still open after {timeout:g}s")
            time.sleep(0.01)

    # -- lifecycle --------------------------------------------------------------------------------------

    def __enter__(self) -> FaultProxy:
        self._state.stopping.clear()
        self.accept_connections()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._state.stopping.set()  # hanging handlers give up at once
        self.refuse_connections()

    def accept_connections(self) -> None:
        """Listen (again) on the same port."""
        if self._server is not None:
            return
        handler = type("Handler", (_Handler,), {"state": self._state, "proxy": self})
        server = ThreadingHTTPServer((LOOPBACK, self.port), handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, name=f"fault-proxy-{self.port}", daemon=True)
        thread.start()
        self._server, self._thread = server, thread

    def refuse_connections(self) -> None:
        """Stop listening: new connections are refused, as by a server that is gone."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def _arrive(self, path: str, raw: bytes, body: Any) -> tuple[int, Fault | None]:
        with self._state.lock:
            arrival = self._state.arrivals
            self._state.arrivals += 1
            digest = hashlib.sha256(raw).digest()
            fresh = digest not in self._state.bodies
            self._state.bodies.add(digest)
            hooks = list(self._state.hooks)
            chosen: Fault | None = None
            for rule in self._state.rules:
                if (rule.times is None or rule.used < rule.times) and rule.matches(
                    arrival, path, raw, body, fresh
                ):
                    rule.used += 1
                    chosen = rule.fault
                    break
        for hook in hooks:
            hook(arrival, path, body)
        return arrival, chosen

    def _record(self, seen: SeenRequest) -> None:
        with self._state.lock:
            self._state.seen.append(seen)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as clients' connection pools expect
    state: _State
    proxy: FaultProxy

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests read the record instead

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def _handle(self) -> None:
        arrived = time.monotonic()
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        index, fault = self.proxy._arrive(self.path, raw, body)
        sent: int | None = None
        left = False
        try:
            sent, left = self._respond(raw, fault)
        finally:
            self.proxy._record(
                SeenRequest(
                    index=index,
                    method=self.command,
                    path=self.path,
                    body_size=len(raw),
                    body_digest=hashlib.sha256(raw).hexdigest(),
                    arrived=arrived,
                    ended=time.monotonic(),
                    fault=fault.label if fault else None,
                    status=sent,
                    client_left=left,
                )
            )

    def _respond(self, raw: bytes, fault: Fault | None) -> tuple[int | None, bool]:
        """Send the answer (the server's, a changed one or an error): the status sent (None for none) and
        whether the client had left before it could be sent."""
        if fault is not None and fault.kind == "status":
            error = {
                "error": {"message": f"injected {fault.label}", "type": "fault_proxy", "code": fault.status}
            }
            headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
            self._send(fault.status, json.dumps(error).encode(), "application/json", headers)
            return fault.status, False
        if fault is not None and fault.kind == "hang":
            left = self._wait_for_client_to_leave(fault.seconds)
            self._close()
            return None, left
        if fault is not None and fault.kind == "drop":
            self._close()
            return None, False
        try:
            code, content_type, payload = self._forward(raw)
        except OSError:
            # The upstream is gone: the client gets no answer on this connection.
            self._close()
            return None, self._client_left()
        if fault is not None and code == 200:
            payload = _spoil(payload, fault)
        if self._client_left():
            self._close()  # nobody to answer: the client gave up while the server worked
            return None, True
        try:
            self._send(code, payload, content_type, {})
        except (BrokenPipeError, ConnectionResetError):
            return None, True  # it gave up just now
        return code, False

    def _client_left(self) -> bool:
        """True when the client closed its end (it gave up waiting): the socket reads as ended."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _wait_for_client_to_leave(self, cap: float) -> bool:
        """Hold the request without an answer until the client closes its connection (True), the cap
        passes or the proxy stops (False)."""
        deadline = time.monotonic() + cap
        while not self.state.stopping.is_set():
            if self._client_left():
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.state.stopping.wait(min(0.05, remaining))
        return False

    def _forward(self, raw: bytes) -> tuple[int, str, bytes]:
        connection = http.client.HTTPConnection(
            self.proxy.upstream_host, self.proxy.upstream_port, timeout=UPSTREAM_TIMEOUT_S
        )
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            connection.request(self.command, self.path, body=raw if raw else None, headers=headers)
            response = connection.getresponse()
            payload = response.read()
            return response.status, response.getheader("Content-Type") or "application/json", payload
        finally:
            connection.close()

    def _send(self, code: int, payload: bytes, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _close(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


def _spoil(payload: bytes, fault: Fault) -> bytes:
    """The server's 200 answer changed as ``fault`` says."""
    if fault.kind == "malformed":
        return payload[: max(1, len(payload) // 2)]
    answer = json.loads(payload)
    for choice in answer.get("choices", []):
        if fault.kind == "missing_logprobs":
            choice["logprobs"] = None
            if "prompt_logprobs" in choice:
                choice["prompt_logprobs"] = None
        elif fault.kind == "short_logprobs":
            logprobs = choice.get("logprobs") or {}
            for key in ("tokens", "token_logprobs", "top_logprobs", "text_offset"):
                if isinstance(logprobs.get(key), list):
                    logprobs[key] = logprobs[key][:-1]
            if isinstance(choice.get("prompt_logprobs"), list):
                choice["prompt_logprobs"] = choice["prompt_logprobs"][:-1]
        else:
            raise ValueError(f"fault proxy: unknown fault {fault.kind!r}")
    return json.dumps(answer).encode()
