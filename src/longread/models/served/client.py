"""HTTP to an OpenAI-compatible server: JSON in and out, retries with backoff, a timeout, no leaked key.

Retry rule. A connection error (refused, reset, unreachable), a timeout, HTTP 429 and any 5xx
are retried up to ``max_retries`` times, waiting ``min(cap, base * 2**attempt)`` scaled by a
jitter factor in [0.5, 1) from a seeded generator — or, when the server sends ``Retry-After``,
that many seconds (at most ``RETRY_AFTER_CAP``). A 200 answer that is not JSON or lacks what the
caller needs (``parse`` raises :class:`MalformedResponse`) is retried like a 5xx, at most
``MALFORMED_RETRIES`` times. 401/403 stop everything (:class:`FatalBackendError`: every request
would fail the same way); another 4xx is the request's own fault and is not retried.

What still fails: if the last attempt could not even connect, the server is gone and
:class:`FatalBackendError` stops the run (finished samples are kept; ``--resume`` continues);
otherwise :class:`ServedRequestError` makes this one sample an error, retried on resume. Neither
message, nor any log line, holds the API key (it is only ever put into the ``Authorization`` header,
and every message passes through :meth:`ServedClient.redact`).
"""

from __future__ import annotations

import email.utils
import http.client
import json
import logging
import random
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from longread.errors import LongreadError
from longread.models.errors import FatalBackendError

logger = logging.getLogger(__name__)

T = TypeVar("T")
RETRY_AFTER_CAP = 60.0
MALFORMED_RETRIES = 2
_BODY_IN_MESSAGE = 300


class ServedRequestError(LongreadError):
    """One request that the server did not answer usefully after every retry (a per-sample error)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        """The last HTTP status, when the server answered at all."""


class MalformedResponse(Exception):
    """A 200 answer without what was asked for (not JSON, no log-probs, wrong shape)."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    seed: int = 0


@dataclass(frozen=True, slots=True)
class _Failure:
    kind: str
    """``unreachable``, ``timeout``, ``http`` or ``malformed``."""
    detail: str
    status: int | None = None
    retry_after: float | None = None


def _retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` as seconds (it may be a number or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class ServedClient:
    """JSON requests to ``base_url`` (``…/v1``); thread-safe, so a pool of workers can share one."""

    def __init__(
        self, base_url: str, *, api_key: str | None, timeout: float, retry: RetryPolicy = RetryPolicy()
    ) -> None:
        self.base_url = base_url.rstrip("/")
        parts = urlsplit(self.base_url)
        self.server_root = f"{parts.scheme}://{parts.netloc}"
        """Where vLLM's own endpoints (``/tokenize``) live: the base URL without ``/v1``."""
        self.timeout = timeout
        self.retry = retry
        self.__api_key = api_key or None
        self._rng = random.Random(retry.seed)
        self._rng_lock = threading.Lock()
        self.sleep: Callable[[float], None] = time.sleep

    def __repr__(self) -> str:
        key = "set" if self.__api_key else "none"
        return f"ServedClient({self.base_url!r}, api_key={key}, timeout={self.timeout})"

    @property
    def has_api_key(self) -> bool:
        return self.__api_key is not None

    def redact(self, text: str) -> str:
        """``text`` with the key (should a server ever echo it) replaced by ``***``."""
        return text.replace(self.__api_key, "***") if self.__api_key else text

    # ------------------------------------------------------------ public

    def post(self, path: str, payload: dict[str, Any], parse: Callable[[Any], T], *, root: bool = False) -> T:
        """POST ``payload`` to ``path`` (under ``/v1``, or under the server root when ``root``) and
        return ``parse(answer JSON)``, retrying by the module's rule."""
        return self._with_retries("POST", path, json.dumps(payload).encode("utf-8"), parse, root)

    def get(self, path: str, parse: Callable[[Any], T], *, root: bool = False) -> T:
        return self._with_retries("GET", path, None, parse, root)

    # ------------------------------------------------------------ one attempt

    def _url(self, path: str, root: bool) -> str:
        return (self.server_root if root else self.base_url) + path

    def _attempt(self, method: str, url: str, body: bytes | None, parse: Callable[[Any], T]) -> T | _Failure:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.__api_key:
            headers["Authorization"] = f"Bearer {self.__api_key}"
        request = urllib.request.Request(url, data=body, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            text = exc.read().decode("utf-8", "replace") if exc.fp is not None else ""
            retry_after = _retry_after_seconds(exc.headers.get("Retry-After") if exc.headers else None)
            return _Failure("http", _error_text(text), exc.code, retry_after)
        except TimeoutError:
            return _Failure("timeout", f"no answer within {self.timeout:g} s")
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                return _Failure("timeout", f"no answer within {self.timeout:g} s")
            return _Failure("unreachable", f"{type(reason).__name__}: {reason}")
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            # Reset or closed mid-answer (a server killed while answering); the next attempt tells whether
            # it is gone for good.
            return _Failure("unreachable", f"{type(exc).__name__}: {exc}")
        try:
            return parse(json.loads(raw))
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _Failure("malformed", f"the answer is not JSON ({raw[:80]!r}…)")
        except MalformedResponse as exc:
            return _Failure("malformed", str(exc))

    # ------------------------------------------------------------ retries

    def _delay(self, attempt: int, failure: _Failure) -> float:
        if failure.retry_after is not None:
            return min(failure.retry_after, RETRY_AFTER_CAP)
        with self._rng_lock:
            jitter = 0.5 + 0.5 * self._rng.random()
        return min(self.retry.max_delay, self.retry.base_delay * 2.0**attempt) * jitter

    def _with_retries(
        self, method: str, path: str, body: bytes | None, parse: Callable[[Any], T], root: bool
    ) -> T:
        url = self._url(path, root)
        malformed = 0
        attempt = 0
        while True:
            outcome = self._attempt(method, url, body, parse)
            if not isinstance(outcome, _Failure):
                return outcome
            failure = outcome
            if failure.kind == "http" and failure.status in (401, 403):
                raise FatalBackendError(
                    self.redact(
                        f"{method} {path}: HTTP {failure.status} from {self.base_url} ({failure.detail}) "
                        "— the server refused the API key; export the right key in the environment variable "
                        "the spec names (api_key_env, default OPENAI_API_KEY) and --resume"
                    )
                )
            retryable = failure.kind in ("unreachable", "timeout") or (
                failure.kind == "http"
                and failure.status is not None
                and (failure.status == 429 or failure.status >= 500)
            )
            if failure.kind == "malformed":
                malformed += 1
                retryable = malformed <= MALFORMED_RETRIES
            if not retryable or attempt >= self.retry.max_retries:
                raise self._final_error(method, path, failure, attempt + 1)
            delay = self._delay(attempt, failure)
            logger.info(
                "%s %s: %s; retry %d/%d in %.1f s",
                method, path, self.redact(_describe(failure)), attempt + 1, self.retry.max_retries, delay,
            )  # fmt: skip
            self.sleep(delay)
            attempt += 1

    def _final_error(self, method: str, path: str, failure: _Failure, attempts: int) -> Exception:
        what = f"{method} {self.base_url}{path}: {_describe(failure)} after {attempts} attempt(s)"
        if failure.kind == "unreachable":
            return FatalBackendError(
                self.redact(
                    f"{what} — the server is not reachable; start it (or fix the URL), then --resume: "
                    "finished samples are kept"
                )
            )
        if (
            failure.kind == "http"
            and failure.status is not None
            and failure.status < 500
            and failure.status != 429
        ):
            hint = (
                "the server refused this request; check the model name, the window (max_model_len), its log"
            )
        elif failure.kind == "timeout":
            hint = "the server is too slow or hangs; raise timeout=…, lower concurrency=… or check the server"
        elif failure.kind == "malformed":
            hint = "the answer is unusable (nothing was scored from it); is the server OpenAI-compatible?"
        else:
            hint = "the server is failing or overloaded; check its log or lower concurrency=…"
        return ServedRequestError(
            self.redact(f"{what} — {hint}; --resume retries this sample"), failure.status
        )


def _describe(failure: _Failure) -> str:
    if failure.kind == "http":
        return f"HTTP {failure.status} ({failure.detail})" if failure.detail else f"HTTP {failure.status}"
    return {"timeout": "timed out", "unreachable": "cannot connect", "malformed": "malformed answer"}[
        failure.kind
    ] + f" ({failure.detail})"


def _error_text(body: str) -> str:
    """The server's own error message (OpenAI shape ``{"error": {"message": …}}``), shortened."""
    message = body
    try:
        parsed = json.loads(body)
        if isinstance(parsed, dict):
            error = parsed.get("error", parsed)
            message = str(error.get("message", error)) if isinstance(error, dict) else str(error)
    except (json.JSONDecodeError, ValueError):
        pass
    message = " ".join(message.split())
    return message[:_BODY_IN_MESSAGE] + ("…" if len(message) > _BODY_IN_MESSAGE else "")
