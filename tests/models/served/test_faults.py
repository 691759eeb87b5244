"""A served model that fails: the runner, the served backend and a real vLLM behind a fault-injecting proxy.

Every run evaluates the same few real ChapterBreak instances (The Hound of the Baskervilles) with one
spec — so one config hash — and is compared byte for byte with a run the proxy left alone. A fault
the backend retries past must not change a number; one that does not go away must be a per-sample
error (nothing scored from it) that ``--resume`` finishes; a server that dies must stop the run with
every finished sample kept, and ``--resume`` after a restart must finish it.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.io import write_instances
from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.cli.app import app
from longread.documents.reader import read_book
from longread.errors import LongreadError
from longread.evaluation import RunOptions, run_task
from longread.models import load_backend
from longread.models.served import ServedBackend
from tests.helpers import gutenberg_book
from tests.models.served import fault_proxy
from tests.models.served.fault_proxy import FaultProxy, SeenRequest, fault_tries
from tests.models.served.vllm_server import VLLMServer

PROXY_PORT = 8825
# The client's timeout only has to outlast a healthy scoring answer (well under a second on a quiet 2-core
# machine, a few seconds on 0.6 of a core). A hang is the proxy's doing, held until the client gives up, so
# no assertion here races the clock: a slow answer the client gave up on is recorded by the proxy
# (``slow_answer``) and its retry is told apart from a fault's. A machine that needs longer than this for
# one scoring answer fails these tests with sample errors that say "timed out".
TIMEOUT_S = 20.0
HANG_CAP_S = 600.0  # far above the timeout: a hang ends only when the client gives up
RETRIES = 2
SPEC = f"openai:http://127.0.0.1:{PROXY_PORT}/v1#smollm2?timeout={TIMEOUT_S:g}&max_retries={RETRIES}&concurrency=2"
PREFIX_LENGTHS = (32, 64)
SUFFIX_TOKENS = 16
INSTANCES = 4
SAMPLES = INSTANCES * len(PREFIX_LENGTHS)
CANDIDATES = 6
QUIET = RunOptions(show_progress=False)
cli = CliRunner()


def is_scoring(body: Any) -> bool:
    """A ChapterBreak request: one echo request scoring all six candidates (not the self-check)."""
    return isinstance(body, dict) and body.get("echo") is True and len(body.get("prompt") or ()) == CANDIDATES


# ------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first four chapter breaks of The Hound of the Baskervilles, prefixes of 80 tokens."""
    book = read_book(gutenberg_book(2852))
    instances = build_book(book, BuildOptions(prefix_tokens=64, suffix_tokens=SUFFIX_TOKENS)).instances
    path = tmp_path_factory.mktemp("data") / "hound.jsonl"
    write_instances(instances[:INSTANCES], path)
    return path


@pytest.fixture(scope="module")
def backend(module_proxy: FaultProxy) -> Iterator[ServedBackend]:
    loaded = load_backend(SPEC)
    assert isinstance(loaded, ServedBackend)
    yield loaded
    loaded.close()


@pytest.fixture
def proxy(module_proxy: FaultProxy, backend: ServedBackend) -> Iterator[FaultProxy]:
    """The module's proxy with no faults and an empty record (request 0 is the test's first)."""
    module_proxy.reset()
    yield module_proxy
    module_proxy.reset()


@pytest.fixture(scope="module")
def reference(
    module_proxy: FaultProxy, backend: ServedBackend, data: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The run every other run must equal: through the proxy, no fault."""
    module_proxy.reset()
    run = tmp_path_factory.mktemp("reference") / "run"
    outcome = _run(backend, data, run)
    assert outcome.errors == [] and outcome.scored == SAMPLES
    return run


# ------------------------------------------------------------ helpers


def _task() -> ChapterBreakTask:
    return ChapterBreakTask(ChapterBreakSettings(prefix_lengths=PREFIX_LENGTHS, suffix_tokens=SUFFIX_TOKENS))


def _run(backend: ServedBackend, data: Path, run: Path, options: RunOptions = QUIET) -> Any:
    return run_task(_task(), data, backend, run, options)


def _rows(run: Path) -> dict[str, dict[str, Any]]:
    lines = (run / "samples.jsonl").read_text().splitlines() if (run / "samples.jsonl").exists() else []
    return {row["key"]: row for row in map(json.loads, lines)}


def _errors(run: Path) -> list[dict[str, Any]]:
    path = run / "errors.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _same_as_reference(run: Path, reference: Path) -> None:
    assert (run / "results.json").read_bytes() == (reference / "results.json").read_bytes()
    assert _rows(run) == _rows(reference)


def _sightings(seen: list[SeenRequest]) -> dict[str, list[SeenRequest]]:
    """Every scoring request body (by digest) with each time the proxy saw it, in arrival order, leaving
    out the tries whose healthy answer came after the client had given up (a slow machine's retries)."""
    by_body: dict[str, list[SeenRequest]] = {}
    for request in seen:
        if request.path == "/v1/completions":
            by_body.setdefault(request.body_digest, []).append(request)
    return {digest: fault_tries(tries) for digest, tries in by_body.items()}


def _faulted(seen: list[SeenRequest]) -> dict[str, list[SeenRequest]]:
    return {digest: tries for digest, tries in _sightings(seen).items() if any(t.fault for t in tries)}


# ------------------------------------------------------------ transient faults: retried, nothing changes


def test_the_backend_only_talks_to_loopback(backend: ServedBackend, reference: Path) -> None:
    assert backend.config.base_url == f"http://127.0.0.1:{PROXY_PORT}/v1"
    assert backend.client.base_url == backend.config.base_url
    stored = json.loads((reference / "config.json").read_text())["config"]["runtime"]["backend"]
    assert stored["base_url"] == backend.config.base_url


def test_faults_that_pass_are_retried_and_change_nothing(
    proxy: FaultProxy,
    backend: ServedBackend,
    data: Path,
    reference: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Eight requests, each failed once (one twice) in its own way: the run equals the reference."""
    caplog.set_level(logging.INFO, logger="longread.models.served.client")
    transient = [
        fault_proxy.too_many_requests(retry_after=1.5),
        fault_proxy.hang(HANG_CAP_S),
        fault_proxy.status(503),
        fault_proxy.malformed(),
        fault_proxy.missing_logprobs(),
        fault_proxy.short_logprobs(),
        fault_proxy.drop(),
    ]
    proxy.fail(fault_proxy.status(500), when=is_scoring, times=2, pin_body=True)
    for fault in transient:
        proxy.fail(fault, when=is_scoring, new_body=True)
    outcome = _run(backend, data, tmp_path / "run")
    assert outcome.errors == []
    _same_as_reference(tmp_path / "run", reference)
    by_fault = {tries[0].fault: tries for tries in _faulted(proxy.seen()).values()}
    assert set(by_fault) == {"status 500"} | {fault.label for fault in transient}
    for label, tries in by_fault.items():
        expected = [label, label, None] if label == "status 500" else [label, None]
        assert [t.fault for t in tries] == expected and tries[-1].status == 200, (label, tries)

    def waited(tries: list[SeenRequest]) -> list[float]:
        return [later.arrived - earlier.ended for earlier, later in itertools.pairwise(tries)]

    # Backoff: base 0.5 s doubling, jitter in [0.5, 1) — the first wait ≥ 0.25 s, the second ≥ 0.5 s.
    first, second = waited(by_fault["status 500"])
    assert first >= 0.24 and second >= 0.49, (first, second)
    (after_429,) = waited(by_fault["status 429 retry-after 1.5"])
    assert after_429 >= 1.49, "Retry-After: 1.5 waited for"
    hung, answered = by_fault[f"hang {HANG_CAP_S:g}s"]
    assert hung.client_left, "the client gave up on the hang itself (the proxy never ends one before)"
    # The client says why it gave up: its own timeout, once, on the first try (no other fault times out).
    gave_up = [record.getMessage() for record in caplog.records if "timed out" in record.getMessage()]
    assert len(gave_up) == 1, gave_up
    assert f"timed out (no answer within {TIMEOUT_S:g} s); retry 1/{RETRIES}" in gave_up[0], gave_up
    # The proxy stamps a request once it has accepted and parsed it, later than the client's timer starts
    # (by 0.17 s seen on a fresh clone with both lanes busy, more on a slower machine): its clock shows the
    # hang lasted, and the retry came after, without racing the client's.
    assert hung.ended - hung.arrived >= TIMEOUT_S / 2, "not before its timeout"
    assert answered.arrived >= hung.arrived + TIMEOUT_S / 2, "asked again after the client gave up"


# ---------------------------------------------------------- faults that stay: sample errors, then resume


def test_faults_that_stay_are_sample_errors_and_resume_finishes(
    proxy: FaultProxy, backend: ServedBackend, data: Path, reference: Path, tmp_path: Path
) -> None:
    # One retry, not RETRIES: every fault below is retried and fails again all the same, and a hang costs
    # a timeout per attempt (retries and timeout are runtime: the resume below uses the module's backend).
    once = load_backend(SPEC.replace(f"max_retries={RETRIES}", "max_retries=1"))
    assert isinstance(once, ServedBackend)
    attempts = 2
    proxy.reset()  # its self-check is not this test's record
    stays = [
        fault_proxy.hang(HANG_CAP_S),
        fault_proxy.malformed(),
        fault_proxy.missing_logprobs(),
        fault_proxy.short_logprobs(),
        fault_proxy.status(500),
    ]
    for fault in stays:  # each takes one request and fails it on every retry
        proxy.fail(fault, when=is_scoring, times=None, pin_body=True)
    run = tmp_path / "run"
    # One request per backend call: a failed call is then not asked again one by one (time).
    try:
        outcome = _run(once, data, run, RunOptions(show_progress=False, request_batch=1))
    finally:
        once.close()
    faulted = _faulted(proxy.seen())
    assert sorted(tries[0].fault or "" for tries in faulted.values()) == sorted(f.label for f in stays)
    for tries in faulted.values():
        assert len(tries) == attempts and all(t.fault for t in tries), "retried, never answered"
        if tries[0].fault == f"hang {HANG_CAP_S:g}s":
            assert all(t.client_left for t in tries), "each hang ended by the client's timeout"
    errors = {error["key"]: error for error in _errors(run)}
    assert len(errors) == len(stays) == len(outcome.errors)
    assert not set(errors) & set(_rows(run)), "nothing scored from a failed request"
    assert set(errors) | set(_rows(run)) == set(_rows(reference))
    messages = " | ".join(str(error) for error in errors.values())
    for expected in (
        f"timed out (no answer within {TIMEOUT_S:g} s) after {attempts} attempt(s)",
        "the answer is not JSON",
        "the choice has no logprobs",
        "prompt_logprobs has",
        "HTTP 500",
    ):
        assert expected in messages, (expected, messages)
    assert messages.count("--resume retries this sample") == len(stays)

    proxy.reset()
    resumed = _run(backend, data, run, RunOptions(show_progress=False, resume=True))
    assert resumed.errors == [] and resumed.scored == len(stays)
    assert resumed.skipped_done == SAMPLES - len(stays)
    _same_as_reference(run, reference)
    assert len(_sightings(proxy.seen())) == len(stays), "only the failed samples were asked again"


def test_a_failing_version_endpoint_at_start_does_not_change_the_model(
    proxy: FaultProxy, backend: ServedBackend
) -> None:
    """What the server says at start is hashed into the run's model: a transient failure there must not
    silently give another model (a run that could not be resumed) — fail clearly or read it again."""
    proxy.fail(fault_proxy.status(503), path="/version", times=None)
    try:
        again = load_backend(SPEC)
    except LongreadError as exc:
        assert "/version" in str(exc)
        return
    try:
        assert again.describe() == backend.describe()
    finally:
        assert isinstance(again, ServedBackend)
        again.close()


# ---------------------------------------------------------- the server dies mid-run (last: it restarts it)


def _eval_args(data: Path, run: Path, *extra: str) -> list[str]:
    return [
        "eval", "chapterbreak", "--data", str(data), "--model", SPEC, "--out", str(run),
        "--prefix-lengths", ",".join(map(str, PREFIX_LENGTHS)), "--suffix-tokens", str(SUFFIX_TOKENS),
        "--request-batch", "2", "--quiet", *extra,
    ]  # fmt: skip


def test_a_server_killed_mid_run_stops_it_and_resume_finishes(
    proxy: FaultProxy, upstream: VLLMServer, data: Path, reference: Path, tmp_path: Path
) -> None:
    scoring_bodies: list[str] = []

    def kill_at_the_fifth_scoring_request(index: int, path: str, body: Any) -> None:
        # Counted by distinct bodies: a slow machine's retry of a request is the same request, not the next.
        digest = json.dumps(body, sort_keys=True)
        if is_scoring(body) and digest not in scoring_bodies:
            scoring_bodies.append(digest)
            if len(scoring_bodies) == 5:  # two calls of two requests are stored by then
                upstream.kill(graceful=False)
                proxy.refuse_connections()  # what a client sees of a server that is gone

    proxy.on_arrival(kill_at_the_fifth_scoring_request)
    run = tmp_path / "run"
    try:
        killed = cli.invoke(app, _eval_args(data, run))
        assert killed.exit_code == 2, killed.output
        assert "cannot connect" in killed.output and "--resume" in killed.output
        assert "every finished sample is kept" in killed.output
        kept = _rows(run)
        assert len(kept) == 4, sorted(kept)
        assert all(kept[key] == row for key, row in _rows(reference).items() if key in kept)
        assert not (run / "results.json").exists()
    finally:
        if upstream.process is None:  # the server is shared by the session: never leave it down
            upstream.start()
    proxy.accept_connections()
    proxy.reset()
    resumed = cli.invoke(app, _eval_args(data, run, "--resume"))
    assert resumed.exit_code == 0, resumed.output
    assert "4 samples already done" in resumed.output
    _same_as_reference(run, reference)
