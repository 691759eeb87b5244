"""The served backend against a real vLLM (CPU) on loopback, serving SmolLM2 (the session's one server).

Same numbers as the local backend: ChapterBreak from a real Gutenberg book through the runner (same
predictions, every candidate's log-prob within 1e-3 nats), MuLD VLSP summaries from real theses
(greedy generation), chat, rolling log-likelihood; the self-check passes; the API key (which this
server demands) never appears in a run directory, a log, an error, ``describe()`` or a ``repr``.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.io import write_instances
from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.benchmarks.muld.builders.vlsp import build_vlsp
from longread.cli.app import app
from longread.documents.reader import read_book
from longread.evaluation import RunOptions, make_task, run_task
from longread.evaluation.controls import ControlledTask, ControlSettings
from longread.models.errors import FatalBackendError, ModelLoadError, ModelSpecError
from longread.models.registry import load_backend
from longread.models.requests import (
    ChatPrompt,
    DocumentPrompt,
    GenerateRequest,
    LoglikelihoodRequest,
    RollingRequest,
)
from longread.models.served import ServedBackend, ServedRequestError, parse_served_spec
from longread.models.served.client import RetryPolicy, ServedClient
from longread.models.served.protocol import echo_payload
from longread.models.served.spec import with_spec_options
from longread.processes.tree import descendants, is_alive
from longread.report import build_report
from tests.helpers import PAUSED_CLI, copy_theses, gutenberg_book, needs_shared
from tests.models.served.vllm_server import API_KEY, VLLMServer, key_in_environment
from tests.models_fixtures import backend as local_backend
from tests.processes.parents import command_line
from tests.tolerances import summed_logprob_tolerance

pytestmark = [needs_shared, pytest.mark.slow]

THESES = ("0704.2963v1", "0705.0587v1")
PROBE_PASSAGES = 3
PROBE_NEW_TOKENS = 24
QUIET = RunOptions(show_progress=False)
MEASURED: dict[str, Any] = {}


class _Records(logging.Handler):
    """Every log record of the module, formatted, to search for the key."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture(scope="module", autouse=True)
def print_measurements() -> Iterator[None]:
    """What the module measured, printed at its end (run with -s to see it)."""
    yield
    print("\nserved backend measurements:", json.dumps(MEASURED, indent=1, default=str))


@pytest.fixture(scope="module")
def records() -> Iterator[_Records]:
    handler = _Records()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield handler
    root.removeHandler(handler)
    root.setLevel(level)


@pytest.fixture(scope="module")
def key_in_env() -> Iterator[None]:
    with key_in_environment():
        yield


@pytest.fixture(scope="module")
def served(vllm: VLLMServer, key_in_env: None, records: _Records) -> Iterator[ServedBackend]:
    started = time.perf_counter()
    loaded = load_backend(vllm.spec())
    MEASURED["connect_and_self_check_s"] = round(time.perf_counter() - started, 2)
    assert isinstance(loaded, ServedBackend)
    yield loaded
    loaded.close()


# ------------------------------------------------------------ spec (no server)


def test_spec_forms_and_refusals(tmp_path: Path) -> None:
    config = parse_served_spec("http://127.0.0.1:9/v1#smollm2?concurrency=8&timeout=5&self_check=false")
    assert (config.base_url, config.model, config.concurrency, config.timeout) == (
        "http://127.0.0.1:9/v1", "smollm2", 8, 5.0
    )  # fmt: skip
    assert not config.self_check and config.tokenizer_name == "smollm2"
    assert parse_served_spec("http://127.0.0.1:9/v1#other").tokenizer_name == "server"
    with pytest.raises(ModelSpecError, match="environment variable"):
        parse_served_spec("http://127.0.0.1:9/v1#smollm2?api_key=abc")
    with pytest.raises(ModelSpecError, match="concurrency"):
        parse_served_spec("http://127.0.0.1:9/v1#smollm2?concurrency=0")
    with pytest.raises(ModelSpecError, match="name the served model"):
        parse_served_spec("http://127.0.0.1:9/v1")
    assert (
        with_spec_options("openai:http://h:1/v1#m", self_check="false")
        == "openai:http://h:1/v1#m?self_check=false"
    )
    assert with_spec_options("openai:http://h:1/v1#m?concurrency=2", timeout="9").endswith(
        "?concurrency=2&timeout=9"
    )
    path = tmp_path / "served.json"
    path.write_text(json.dumps({"base_url": "http://127.0.0.1:9/v1", "model": "m", "tokenizer": "smollm2"}))
    assert parse_served_spec(str(path)).tokenizer_name == "smollm2"
    path.write_text(json.dumps({"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key": "x"}))
    with pytest.raises(ModelSpecError, match="api_key"):
        parse_served_spec(str(path))


def test_nothing_listening_is_fatal_after_the_retries() -> None:
    """A real refused connection on loopback (a port nobody listens on): retried, then FatalBackendError."""
    client = ServedClient(
        "http://127.0.0.1:8809/v1",
        api_key=API_KEY,
        timeout=2,
        retry=RetryPolicy(max_retries=2, base_delay=0.01),
    )
    waits: list[float] = []
    client.sleep = waits.append
    with pytest.raises(FatalBackendError, match="not reachable") as info:
        client.get("/models", lambda body: body)
    assert len(waits) == 2 and waits[1] > waits[0] * 1.0  # exponential backoff (jitter in [0.5, 1))
    assert "after 3 attempt(s)" in str(info.value) and API_KEY not in str(info.value)


# ------------------------------------------------------------ against vLLM


def test_self_check_passes_and_describe_says_how_it_scores(served: ServedBackend) -> None:
    assert served.check.passed and served.check.route == "prompt_logprobs"
    assert served.check.mean_logprob is not None and -8.0 < served.check.mean_logprob < -1.0
    assert "loglikelihood" in served.capabilities
    facts = served.describe()
    assert facts["tokenizer"] == "smollm2"
    # How the server was reached is recorded but not hashed: a run resumes at another address or concurrency.
    assert not {"base_url", "spec", "concurrency", "timeout_s", "max_retries"} & set(facts)
    assert served.runtime_facts()["base_url"] == served.config.base_url
    assert facts["self_check"].startswith("passed") and "prompt_logprobs" in facts["logprob_route"]
    assert facts["prompt_form"] == "token ids" and facts["max_length"] == "4096"
    MEASURED["self_check_mean_logprob"] = round(served.check.mean_logprob, 4)


def test_echo_block_and_prompt_logprobs_carry_the_same_numbers(served: ServedBackend) -> None:
    """vLLM answers echo+logprobs+max_tokens=0 with both the OpenAI block and its prompt_logprobs."""
    ids = served.tokenizer.encode("It was the best of times, it was the worst of times.")
    body = served.client.post("/completions", echo_payload("smollm2", [ids], 0), lambda b: b)
    (choice,) = body["choices"]
    echoed = choice["logprobs"]["token_logprobs"]
    by_id = [None] + [
        entry[str(token)]["logprob"]
        for entry, token in zip(choice["prompt_logprobs"][1:], ids[1:], strict=True)
    ]
    assert len(echoed) == len(ids) and echoed[0] is None
    assert echoed == by_id


def test_wrong_key_is_fatal_and_never_shown(vllm: VLLMServer) -> None:
    wrong = f"lr-wrong-key-{secrets.token_hex(8)}"
    client = ServedClient(vllm.base_url, api_key=wrong, timeout=10, retry=RetryPolicy(max_retries=1))
    with pytest.raises(FatalBackendError, match="HTTP 401") as info:
        client.get("/models", lambda body: body)
    assert wrong not in str(info.value) and wrong not in repr(client)


def test_a_model_the_server_does_not_serve_is_named(vllm: VLLMServer, key_in_env: None) -> None:
    with pytest.raises(ModelLoadError, match="serves smollm2, not 'gpt-5'"):
        load_backend(f"openai:{vllm.base_url}#gpt-5?tokenizer=smollm2")


@pytest.fixture(scope="module")
def chapterbreak_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three ChapterBreak instances from a real Gutenberg book (Frankenstein), prefixes of 512 tokens."""
    built = build_book(read_book(gutenberg_book(84)), BuildOptions(prefix_tokens=512))
    path = tmp_path_factory.mktemp("cb") / "cb.jsonl"
    write_instances(built.instances[:3], path)
    return path


def _rows(run: Path) -> list[dict[str, Any]]:
    return sorted(
        (json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()),
        key=lambda r: r["key"],
    )


@pytest.fixture(scope="module")
def chapterbreak_runs(
    chapterbreak_data: Path, served: ServedBackend, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path]:
    settings = ChapterBreakSettings(prefix_lengths=(128, 256), suffix_tokens=64)
    root = tmp_path_factory.mktemp("cb-runs")
    timings = {}
    for name, model in (("local", local_backend("smollm2")), ("served", served)):
        started = time.perf_counter()
        outcome = run_task(ChapterBreakTask(settings), chapterbreak_data, model, root / name, QUIET)
        timings[name] = round(time.perf_counter() - started, 2)
        assert not outcome.errors, outcome.errors
    MEASURED["chapterbreak_seconds"] = timings
    return root / "local", root / "served"


def test_chapterbreak_through_vllm_equals_the_local_backend(chapterbreak_runs: tuple[Path, Path]) -> None:
    local, served = (_rows(run) for run in chapterbreak_runs)
    assert [r["key"] for r in local] == [r["key"] for r in served] and len(local) == 6
    deltas: list[float] = []
    bounds: list[float] = []
    for a, b in zip(local, served, strict=True):
        assert (a["prediction"], a["correct"], a["tie"]) == (b["prediction"], b["correct"], b["tie"]), a[
            "key"
        ]
        for name in (
            "continuation_tokens",
            "continuation_tokens_original",
            "context_tokens_kept",
            "is_greedy",
        ):
            assert a[name] == b[name], (a["key"], name)
        deltas += [abs(x - y) for x, y in zip(a["logprobs"], b["logprobs"], strict=True)]
        bounds += [summed_logprob_tolerance(n) for n in a["continuation_tokens"]]
    MEASURED["chapterbreak_candidates"] = len(deltas)
    MEASURED["chapterbreak_max_abs_delta_logprob"] = max(deltas)
    assert all(delta <= bound for delta, bound in zip(deltas, bounds, strict=True)), (deltas, bounds)
    results = [json.loads((run / "results.json").read_text()) for run in chapterbreak_runs]
    assert results[0]["overall"]["metrics"]["accuracy"] == results[1]["overall"]["metrics"]["accuracy"]


def test_the_report_of_both_runs_names_the_server_and_finds_them_in_agreement(
    chapterbreak_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    files = build_report(list(chapterbreak_runs), tmp_path / "report")
    markdown = files.markdown.read_text()
    stored = json.loads((chapterbreak_runs[1] / "config.json").read_text())
    backend = stored["sessions"][0]["runtime"]["backend"]
    server = backend["server"]
    assert server.startswith("vllm "), server  # what longread read from the server's /version
    assert backend["client"].startswith("longread ")
    assert f"| server | not recorded | {server} |" in markdown
    # the same model (by name) on the same data and settings: its log-probs judged against the tolerance
    assert "6 shared rows; all 36 log-probs within the tolerance" in markdown
    assert "the same output in all 6 rows." in markdown


def test_the_api_key_is_in_no_file_log_error_or_description(
    chapterbreak_runs: tuple[Path, Path], served: ServedBackend, records: _Records
) -> None:
    with pytest.raises(ServedRequestError) as refused:  # a real 400 from the server, for its message
        served.client.post("/completions", {"model": "smollm2", "prompt": "x", "max_tokens": 0}, lambda b: b)
    texts = [
        str(refused.value),
        repr(served),
        repr(served.client),
        json.dumps(served.describe()),
        *records.lines,
    ]
    for path in chapterbreak_runs[1].rglob("*"):
        if path.is_file():
            texts.append(path.read_bytes().decode("utf-8", "replace"))
    assert len(texts) > 6 and any("self-check" in line for line in records.lines)
    assert not [text[:200] for text in texts if API_KEY in text]


def test_a_context_control_through_vllm_gives_the_local_rows(
    chapterbreak_data: Path, served: ServedBackend, tmp_path: Path
) -> None:
    """Shuffling the prefix beyond its last 64 tokens: the served run reads the very token ids the local
    run reads (the same sha256) and scores them within the summed tolerance."""
    control = ControlSettings("shuffle", keep_last=64, seed=0)
    runs = []
    for name, model in (("local", local_backend("smollm2")), ("served", served)):
        task = ControlledTask(
            make_task("chapterbreak", {"prefix_lengths": "128", "suffix_tokens": "64"}), control
        )
        outcome = run_task(task, chapterbreak_data, model, tmp_path / name, QUIET)  # type: ignore[arg-type]
        assert not outcome.errors, outcome.errors
        runs.append(_rows(tmp_path / name))
    local, remote = runs
    assert len(local) == len(remote) == 3
    for a, b in zip(local, remote, strict=True):
        assert a["key"] == b["key"] and a["read_sha256"] == b["read_sha256"] and a["tokens_perturbed"] > 0
        assert (a["prediction"], a["correct"]) == (b["prediction"], b["correct"])
        bounds = [summed_logprob_tolerance(n) for n in a["continuation_tokens"]]
        assert all(abs(x - y) <= t for x, y, t in zip(a["logprobs"], b["logprobs"], bounds, strict=True))


def test_an_interrupted_served_eval_leaves_no_process_and_resumes_to_the_same_rows(
    chapterbreak_data: Path, chapterbreak_runs: tuple[Path, Path], vllm: VLLMServer, tmp_path: Path
) -> None:
    """Ctrl-C (SIGINT) after 1 of 3 rows: the command says how to resume and exits 130, nothing it
    started is left, and --resume finishes with the rows of the uninterrupted served run (at 256). The key
    (from OPENAI_API_KEY) is shown nowhere: neither in either command's output nor in the run's files."""
    run = tmp_path / "run"
    command = [
        sys.executable, "-m", "longread.cli", "eval", "chapterbreak", "--data", str(chapterbreak_data),
        "--model", vllm.spec("concurrency=2"), "--out", str(run), "--prefix-lengths", "256",
        "--suffix-tokens", "64", "--quiet",
    ]  # fmt: skip
    env = os.environ | {"OPENAI_API_KEY": API_KEY}
    marker = tmp_path / "paused"
    paused = subprocess.Popen(
        [sys.executable, str(PAUSED_CLI), "1", str(marker), *command[3:]],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 600
    while not marker.exists():
        assert paused.poll() is None and time.monotonic() < deadline, paused.communicate()[1][-2000:]
        time.sleep(0.05)
    tree = {pid: command_line(pid) for pid in [paused.pid, *descendants(paused.pid)]}
    paused.send_signal(signal.SIGINT)
    _, stderr = paused.communicate(timeout=120)
    assert paused.returncode == 130, stderr[-2000:]
    assert b"interrupted (SIGINT): 1 finished sample(s) are kept" in stderr and b"--resume" in stderr
    assert not [pid for pid, line in tree.items() if is_alive(pid) and command_line(pid) == line]
    resumed = subprocess.run([*command, "--resume"], capture_output=True, text=True, env=env, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    outputs = [stderr.decode(errors="replace"), resumed.stdout, resumed.stderr] + [
        path.read_text(errors="replace") for path in run.rglob("*") if path.is_file()
    ]
    assert not [text[:200] for text in outputs if API_KEY in text]
    assert "openai" in (run / "config.json").read_text()
    again = _rows(run)
    before = [row for row in _rows(chapterbreak_runs[1]) if row["prefix_length"] == 256]
    assert [r["key"] for r in again] == [r["key"] for r in before] and len(again) == 3
    for a, b in zip(again, before, strict=True):
        assert (a["prediction"], a["correct"], a["tie"]) == (b["prediction"], b["correct"], b["tie"])
        bounds = [summed_logprob_tolerance(n) for n in a["continuation_tokens"]]
        assert all(abs(x - y) <= t for x, y, t in zip(a["logprobs"], b["logprobs"], bounds, strict=True))


def test_text_prompts_score_as_token_ids_do(vllm: VLLMServer, served: ServedBackend) -> None:
    """prompt_form=text (for servers that refuse ids): same scores where the text round-trips."""
    as_text = load_backend(vllm.spec("prompt_form=text&self_check=true"))
    assert isinstance(as_text, ServedBackend) and as_text.check.settings.prompt_form == "text"
    request = LoglikelihoodRequest(
        "Mr. Bennet was so odd a mixture of quick parts, sarcastic humour, reserve, and caprice, that the",
        (" experience of three-and-twenty years", " cat", " weather of the county"),
    )
    (by_ids,), (by_text,) = served.loglikelihood([request]), as_text.loglikelihood([request])
    assert [s.n_tokens for s in by_ids.scores] == [s.n_tokens for s in by_text.scores]
    for a, b in zip(by_ids.scores, by_text.scores, strict=True):
        assert abs(a.logprob - b.logprob) <= summed_logprob_tolerance(a.n_tokens)
        assert a.is_greedy == b.is_greedy
    assert as_text.describe()["prompt_form"].startswith("text")
    as_text.close()


def test_rolling_loglikelihood_equals_the_local_backend(served: ServedBackend) -> None:
    text = read_book(gutenberg_book(84)).chapters[1].text[:1500]
    (remote,) = served.loglikelihood_rolling([RollingRequest(text)])
    (local,) = local_backend("smollm2").loglikelihood_rolling([RollingRequest(text)])
    assert remote.n_tokens == local.n_tokens
    assert abs(remote.logprob - local.logprob) <= summed_logprob_tolerance(remote.n_tokens)
    MEASURED["rolling_abs_delta"] = abs(remote.logprob - local.logprob)


def test_chat_document_and_plain_generation_equal_local_greedy(served: ServedBackend) -> None:
    book = read_book(gutenberg_book(84)).chapters[2].text
    requests = [
        GenerateRequest(ChatPrompt((("user", "Name three colours."),)), max_tokens=24),
        GenerateRequest(
            DocumentPrompt(
                book, "\n\nIn one sentence, this chapter is about", cut="right", max_document_tokens=300
            ),
            max_tokens=20,
            stop=("\n",),
        ),
        GenerateRequest("The capital of France is", max_tokens=16, stop=(".",)),
    ]
    remote = served.generate(requests)
    local = local_backend("smollm2").generate(requests)
    for a, b in zip(local, remote, strict=True):
        assert (a.text, a.stopped_by, a.n_generated_tokens) == (b.text, b.stopped_by, b.n_generated_tokens)
        assert (a.n_prompt_tokens, a.document_tokens_kept) == (b.n_prompt_tokens, b.document_tokens_kept)
    assert remote[2].stopped_by == "stop" and remote[1].document_tokens_kept == 300


@pytest.fixture(scope="module")
def vlsp_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two real theses, built as ``longread build muld/vlsp`` builds them."""
    root = tmp_path_factory.mktemp("vlsp")
    source = copy_theses(root / "src", THESES)
    out = root / "vlsp.jsonl"
    report = build_vlsp([source], out)
    assert len(report.kept) == 2
    return out


def test_muld_vlsp_summaries_through_vllm_equal_local_greedy(
    vlsp_data: Path, served: ServedBackend, tmp_path: Path
) -> None:
    options = {"mode": "first", "first_tokens": "256", "summary_tokens": "24"}
    rows = {}
    for name, model in (("local", local_backend("smollm2")), ("served", served)):
        started = time.perf_counter()
        outcome = run_task(make_task("muld/vlsp", options), vlsp_data, model, tmp_path / name, QUIET)
        MEASURED[f"vlsp_{name}_s"] = round(time.perf_counter() - started, 2)
        assert outcome.scored == 2 and not outcome.errors, outcome.errors
        rows[name] = _rows(tmp_path / name)
    same = [a["prediction"] == b["prediction"] for a, b in zip(rows["local"], rows["served"], strict=True)]
    MEASURED["vlsp_same_predictions"] = f"{sum(same)}/{len(same)}"
    assert all(same), [
        (a["prediction"], b["prediction"]) for a, b in zip(rows["local"], rows["served"], strict=True)
    ]
    assert all(row["prediction"].strip() for row in rows["served"])
    # the report of both: no log-probs in a generation run, so the texts are what it compares
    markdown = build_report(
        [tmp_path / "local", tmp_path / "served"], tmp_path / "report"
    ).markdown.read_text()
    assert "2 shared rows, no log-probs to compare; the same output in all 2 rows." in markdown, markdown


def test_memory_probes_through_vllm_equal_the_local_model(
    served: ServedBackend, vllm: VLLMServer, tmp_path: Path
) -> None:
    """`longread probe memory` with a served model: cloze (generation), extraction (greedy token ids
    the server returns) and min-k (prompt log-probs) — the local model's items, to the tolerance. The
    Call of the Wild (7 chapters), 3 passages, 24 new tokens: every probe and place kind, kept small."""
    from longread.probes.memory import MemoryProbeSettings, probe_memory
    from tests.tolerances import summed_logprob_tolerance

    book = gutenberg_book(215)
    out = tmp_path / "probe"
    probes = ("cloze", "cloze-rank", "extraction", "min-k")
    settings = MemoryProbeSettings(passages=PROBE_PASSAGES, new_tokens=PROBE_NEW_TOKENS, probes=probes)
    arguments = [
        "probe", "memory", str(book), "--model", vllm.spec("concurrency=2"), "--out", str(out),
        "--passages", str(PROBE_PASSAGES), "--new-tokens", str(PROBE_NEW_TOKENS), "--probes",
        ",".join(probes), "--quiet",
    ]  # fmt: skip
    done = CliRunner().invoke(app, arguments, env={"OPENAI_API_KEY": API_KEY})  # in-process: no torch start
    assert done.exit_code == 0, (done.output[-2000:], done.exception)
    remote = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    stored = json.loads((out / "books.json").read_text())
    said = ("cloze: cannot tell", "cloze-rank: the book has")  # what the model did; the names it has
    dropped = [note for note in stored["books"][0]["notes"] if not note.startswith(said)]
    assert stored["model"]["backend"] == "openai" and dropped == []  # nothing cut or skipped
    local, _ = probe_memory(local_backend("smollm2"), [read_book(book)], settings)
    by_probe = {
        probe: ([i for i in local if i["probe"] == probe], [i for i in remote if i["probe"] == probe])
        for probe in ("cloze", "cloze-rank", "extraction", "min_k")
    }
    mine, theirs = by_probe["cloze"]
    assert mine and [i["prediction"] for i in mine] == [i["prediction"] for i in theirs]
    mine, theirs = by_probe["cloze-rank"]  # log-likelihoods alone: as ChapterBreak, served as local
    assert mine and [i["candidates"] for i in mine] == [i["candidates"] for i in theirs]
    for a, b in zip(mine, theirs, strict=True):
        assert all(
            abs(x - y) <= summed_logprob_tolerance(80)
            for x, y in zip(a["logprobs"], b["logprobs"], strict=True)
        )
    mine, theirs = by_probe["extraction"]
    assert len(mine) > PROBE_PASSAGES + 3, "seeded places and every chapter break"
    assert [i["prompt_ids"] for i in mine] == [i["prompt_ids"] for i in theirs]
    assert [i["output_ids"] for i in mine] == [i["output_ids"] for i in theirs]
    assert all(len(i["output_ids"]) == PROBE_NEW_TOKENS for i in theirs)
    mine, theirs = by_probe["min_k"]
    assert len(mine) == len(theirs) == PROBE_PASSAGES
    for a, b in zip(mine, theirs, strict=True):
        assert a["tokens"] == b["tokens"]
        k = max(1, -(-a["tokens"] * 20 // 100))
        assert abs(a["score"] - b["score"]) <= summed_logprob_tolerance(k) / k, (a, b)
    MEASURED["memory_probe_served_places"] = len(by_probe["extraction"][1])


def test_calibrate_through_vllm_finds_the_planted_copy(served: ServedBackend, tmp_path: Path) -> None:
    """The calibration on a served model, small (5 instances, one per bundled book; the local test, with
    15, checks the verdicts): the copy is planted in the served model's own tokens (its tokenizer counts
    them) and every planted instance is answered right; dropping everything before the last 32 tokens
    brings the planted run back to the unplanted one, keeping 160 changes none of its answers — a server
    that cut its context could do neither. Five pairs are too few for the claim rule (McNemar p ≥ 2 / 2^5)."""
    from longread.calibration.run import CalibrationPlan, run_calibration
    from tests.calibration.data import write_bundled

    data = write_bundled(tmp_path / "cb.jsonl", per_book=1, negatives=5)  # against 3, one gain in 5 pairs
    plan = CalibrationPlan(distances=(96,), controls=("none",), keep_last=(32, 160), copy_tokens=32)
    settings = {"prefix_lengths": "192", "suffix_tokens": "16"}
    files = run_calibration(lambda: make_task("chapterbreak", settings), data, served, tmp_path / "out", plan,
                            QUIET, count=served.count_tokens)  # fmt: skip
    assert files.failed == 0
    rows = {(row.control, row.keep_last): row for row in files.rows}
    intact, reached, kept = rows[("intact", None)], rows[("none", 32)], rows[("none", 160)]
    assert intact.paired == 5 and intact.planted == 1.0 and intact.planted_gain >= 0.2  # 0.4 locally
    discordant = round(intact.planted_gain * 5)  # every planted instance is right: only gains discord
    assert intact.p == pytest.approx(min(1.0, 2 / 2**discordant))
    assert reached.position == "perturbed" and reached.planted == reached.unplanted
    assert reached.control_effect is not None and reached.control_effect <= -0.2
    assert kept.position == "kept" and kept.planted == 1.0 and kept.control_effect == 0.0
