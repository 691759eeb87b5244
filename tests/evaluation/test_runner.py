"""The generic runner, driven by scripted backends (no torch): keys, resume, errors, reuse, ties, batching."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.io import load_instances, write_instances
from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.cli.app import app
from longread.evaluation import (
    CapabilityError,
    RunOptions,
    choose_request_kind,
    make_task,
    read_typed_rows,
    run_task,
    stratified_sample,
)
from longread.evaluation.registry import TaskOptionError, UnknownTaskError
from longread.models.requests import LoglikelihoodRequest
from tests.fake_backends import ScriptedLM, ScriptedRanker
from tests.helpers import synthetic_book

LENGTHS = (16, 64, 100_000)


@pytest.fixture(scope="module")
def data_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    instances = []
    for name in ("a", "b", "c"):
        instances += build_book(
            synthetic_book(9, book_id=name), BuildOptions(prefix_tokens=300, suffix_tokens=24)
        ).instances
    path = tmp_path_factory.mktemp("cb") / "cb.jsonl"
    write_instances(instances, path)
    return path


def task(lengths: tuple[int, ...] = LENGTHS) -> ChapterBreakTask:
    return ChapterBreakTask(ChapterBreakSettings(prefix_lengths=lengths, suffix_tokens=20))


def quiet(**kwargs: object) -> RunOptions:
    return RunOptions(show_progress=False, **kwargs)  # type: ignore[arg-type]


def gold_wins(context: str, continuation: str) -> float:
    # The gold opens with the prefix's next chapter number in the synthetic book; scoring by overlap
    # with the context's last words is enough to make predictions differ between lengths.
    seen = set(context.split()[-40:])
    return float(sum(1 for word in continuation.split() if word in seen)) - 1000 - len(continuation) / 1000


def test_rows_results_and_reuse(data_file: Path, tmp_path: Path) -> None:
    backend = ScriptedLM(score=gold_wins)
    outcome = run_task(task(), data_file, backend, tmp_path / "run", quiet())
    rows = read_typed_rows(tmp_path / "run", ChapterBreakTask.row_model)
    n_instances = len({row.key.split("@")[0] for row in rows})
    assert len(rows) == 3 * n_instances and outcome.instances == n_instances
    longest = [row for row in rows if row.prefix_length == 100_000]
    # the whole prefix fits into 100000 "tokens" but not into 64: that sample is asked, not reused
    assert all(not row.context_truncated for row in longest)
    assert outcome.reused == 0 and outcome.scored == len(rows)
    assert sum(backend.calls) == len(rows)
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert set(results["by_x"]) == {"16", "64", "100000"}
    accuracy = results["by_x"]["64"]["metrics"]["accuracy"]
    assert accuracy["n"] == n_instances
    assert 0 <= accuracy["ci_low"] <= accuracy["value"] <= accuracy["ci_high"] <= 1
    assert results["by_x"]["16"]["extras"]["truncated_prefix"] == n_instances
    assert results["x_axis"] == {"field": "prefix_length", "label": "prefix length (tokens)", "scale": "log2"}
    assert results["metrics"]["word_perplexity"]["level"] == "corpus"
    assert results["chance"] == pytest.approx(1 / 6)


def test_a_result_that_held_the_whole_context_is_reused(data_file: Path, tmp_path: Path) -> None:
    backend = ScriptedLM()
    outcome = run_task(task((16, 100_000, 200_000)), data_file, backend, tmp_path / "run", quiet())
    rows = read_typed_rows(tmp_path / "run", ChapterBreakTask.row_model)
    reused = [row for row in rows if row.reused_shorter_length]
    assert {row.prefix_length for row in reused} == {200_000}
    assert outcome.reused == len(reused) == outcome.instances
    assert sum(backend.calls) == 2 * outcome.instances  # 16 and 100000 asked; 200000 answered by 100000
    by_key = {row.key: row for row in rows}
    for row in reused:
        twin = by_key[row.key.replace("@200000", "@100000")]
        assert row.logprobs == twin.logprobs


def test_failed_samples_are_reported_and_retried_on_resume(data_file: Path, tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    run_task(task(), data_file, ScriptedLM(score=gold_wins), whole, quiet())

    def fail_at_64(request: LoglikelihoodRequest) -> str | None:
        return "server said no" if request.max_context_tokens == 64 else None

    failing = ScriptedLM(score=gold_wins, fail_when=fail_at_64)
    run = tmp_path / "run"
    outcome = run_task(task(), data_file, failing, run, quiet())
    assert outcome.errors and all(key.endswith("@00064") for key, _ in outcome.errors)
    assert all("server said no (book " in message for _, message in outcome.errors)
    results = json.loads((run / "results.json").read_text())
    assert results["run"]["errors"] == len(outcome.errors)
    assert "64" not in results["by_x"]

    healed = ScriptedLM(score=gold_wins)
    again = run_task(task(), data_file, healed, run, quiet(resume=True))
    assert sum(healed.calls) == len(outcome.errors)  # only the failed samples are asked again
    assert not again.errors
    assert (run / "results.json").read_bytes() == (whole / "results.json").read_bytes()


def test_batching_gives_the_same_results_and_isolates_a_bad_request(data_file: Path, tmp_path: Path) -> None:
    one = tmp_path / "one"
    run_task(task(), data_file, ScriptedLM(score=gold_wins), one, quiet())
    batched = ScriptedLM(score=gold_wins)
    run_task(task(), data_file, batched, tmp_path / "batched", quiet(request_batch=4))
    assert max(batched.calls) == 4
    assert (tmp_path / "batched" / "results.json").read_bytes() == (one / "results.json").read_bytes()

    first_context: list[str] = []

    def fail_one(request: LoglikelihoodRequest) -> str | None:
        if not first_context:
            first_context.append(request.context)
        return "bad" if request.context == first_context[0] and request.max_context_tokens == 16 else None

    picky = ScriptedLM(score=gold_wins, fail_when=fail_one)
    outcome = run_task(task(), data_file, picky, tmp_path / "picky", quiet(request_batch=4))
    # the synthetic books share their text, so the failing prefix is in one instance per book
    same_prefix = sum(1 for x in load_instances(data_file) if x.prefix == first_context[0])
    assert len(outcome.errors) == same_prefix < 4  # their neighbours in each batch were scored one by one
    assert outcome.scored == 3 * outcome.instances - same_prefix


def test_ties_count_as_wrong_and_are_recorded(data_file: Path, tmp_path: Path) -> None:
    flat = ScriptedLM(score=lambda context, continuation: -1.0)
    outcome = run_task(task((64,)), data_file, flat, tmp_path / "run", quiet())
    rows = read_typed_rows(tmp_path / "run", ChapterBreakTask.row_model)
    assert all(row.tie and not row.correct and row.prediction == 0 for row in rows)
    assert outcome.results["by_x"]["64"]["metrics"]["accuracy"]["value"] == 0.0
    assert outcome.results["by_x"]["64"]["extras"]["ties"] == len(rows)


def test_a_ranker_answers_chapterbreak_through_the_same_runner(data_file: Path, tmp_path: Path) -> None:
    ranker = ScriptedRanker()
    outcome = run_task(task(), data_file, ranker, tmp_path / "run", quiet())
    assert outcome.request_kind == "rank"
    rows = read_typed_rows(tmp_path / "run", ChapterBreakTask.row_model)
    assert all(row.score_kind == "rank" and row.scores and row.logprobs is None for row in rows)
    assert outcome.results["by_x"]["64"]["metrics"]["word_perplexity"]["value"] is None


def test_asking_a_backend_for_what_it_cannot_do_fails_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(
        CapabilityError, match=r"'scripted-ranker' answers rank, but task 'muld' needs one of"
    ):
        choose_request_kind("muld", ("generate",), ScriptedRanker())
    assert choose_request_kind("cb", ("loglikelihood", "rank"), ScriptedRanker()) == "rank"
    assert choose_request_kind("cb", ("loglikelihood", "rank"), ScriptedLM()) == "loglikelihood"


def test_stratified_sample_spreads_over_books() -> None:
    items = (
        [("big", i) for i in range(90)] + [("mid", i) for i in range(8)] + [("small", i) for i in range(2)]
    )
    chosen = stratified_sample(items, 9, lambda item: item[0], seed=3)
    books = [book for book, _ in chosen]
    assert books.count("small") == 2 and books.count("mid") >= 3 and books.count("big") <= 4
    assert chosen == stratified_sample(items, 9, lambda item: item[0], seed=3)
    assert chosen != stratified_sample(items, 9, lambda item: item[0], seed=4)
    assert chosen == sorted(chosen, key=items.index)  # file order is kept


def test_task_registry_names_what_is_wrong() -> None:
    with pytest.raises(UnknownTaskError, match="known tasks: chapterbreak"):
        make_task("chapterbrake")
    with pytest.raises(TaskOptionError, match=r"no setting 'prefix_length'.*prefix_lengths"):
        make_task("chapterbreak", {"prefix_length": "256"})
    with pytest.raises(TaskOptionError, match="suffix_tokens"):
        make_task("chapterbreak", {"suffix_tokens": "0"})
    made = make_task("chapterbreak", {"prefix_lengths": "512,256", "suffix_tokens": "64"})
    assert made.settings.model_dump()["prefix_lengths"] == (256, 512)


def test_tasks_command_lists_chapterbreak() -> None:
    result = CliRunner().invoke(app, ["tasks"])
    assert result.exit_code == 0
    assert (
        "chapterbreak:" in result.output and "-o prefix_lengths=256,512,1024,2048,4096,8192" in result.output
    )
    assert "loglikelihood or rank" in result.output


def test_a_fatal_backend_error_stops_the_run_and_keeps_every_finished_sample(
    data_file: Path, tmp_path: Path
) -> None:
    """A server gone for good stops the run at once (not one error per sample left); --resume finishes it."""
    from longread.models.errors import FatalBackendError

    whole = tmp_path / "whole"
    run_task(task(), data_file, ScriptedLM(score=gold_wins), whole, quiet())
    asked: list[int] = []

    class Dies(ScriptedLM):
        def loglikelihood(self, requests, progress=None):  # type: ignore[no-untyped-def]
            asked.append(len(requests))
            if len(asked) > 3:
                raise FatalBackendError("http://127.0.0.1:9/v1 refused every connection")
            return super().loglikelihood(requests, progress)

    run = tmp_path / "run"
    with pytest.raises(FatalBackendError, match="refused"):
        run_task(task(), data_file, Dies(score=gold_wins), run, quiet())
    assert len(asked) == 4  # stopped at the first fatal answer
    kept = read_typed_rows(run, ChapterBreakTask.row_model)
    assert len(kept) == 3 and not (run / "errors.jsonl").read_text().strip()
    healed = ScriptedLM(score=gold_wins)
    run_task(task(), data_file, healed, run, quiet(resume=True))
    assert (run / "results.json").read_bytes() == (whole / "results.json").read_bytes()


def _sampled_pairs(data: Path, out: Path, sample: int, backend: ScriptedLM) -> list[str]:
    from longread.evaluation import RunOptions, run_task

    task = ChapterBreakTask(ChapterBreakSettings(prefix_lengths=(32,), suffix_tokens=16))
    run_task(task, data, backend, out, RunOptions(sample=sample, show_progress=False))
    return sorted(json.loads(line)["pair_id"] for line in (out / "samples.jsonl").read_text().splitlines())


def test_samples_are_the_same_across_models_and_file_orders_and_nest(tmp_path: Path) -> None:
    """--sample draws by hash of (seed, book, pair id): another model, the instances in another order,
    the same instances; N of them are the first N of a larger M."""
    import random

    instances = [
        instance
        for book in ("a", "b", "c")
        for instance in build_book(
            synthetic_book(12, book_id=book), BuildOptions(prefix_tokens=300, suffix_tokens=24)
        ).instances
    ]
    assert len(instances) > 12
    data, shuffled = tmp_path / "data.jsonl", tmp_path / "shuffled.jsonl"
    write_instances(instances, data)
    reordered = instances[:]
    random.Random(1).shuffle(reordered)
    write_instances(reordered, shuffled)
    first = _sampled_pairs(data, tmp_path / "one", 7, ScriptedLM())
    other_model = ScriptedLM(score=lambda context, continuation: -float(len(set(continuation))), name="other")
    assert _sampled_pairs(data, tmp_path / "two", 7, other_model) == first
    assert _sampled_pairs(shuffled, tmp_path / "three", 7, ScriptedLM()) == first
    larger = _sampled_pairs(data, tmp_path / "four", 11, ScriptedLM())
    assert set(first) < set(larger) and len(larger) == 11
    books = [pair.split("/")[1] for pair in first]
    assert {books.count(book) for book in ("a", "b", "c")} <= {2, 3}  # spread over the books
