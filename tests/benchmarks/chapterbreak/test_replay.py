"""A ChapterBreak run stored by the evaluation loop of longread 0.1 reproduces exactly through the runner.

``tests/data/stored_run`` holds 16 instances and the run the old loop made of
them (random:gpt2, 5 prefix lengths, one length answered by reuse). A backend
that answers each request with the log-probs stored for it replays that run
through :func:`run_task`; every row field the old loop wrote and every number of
its results must come out the same.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from longread.benchmarks.chapterbreak.io import load_instances
from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.evaluation import RunOptions, run_task
from longread.models.requests import (
    LANGUAGE_MODEL_CAPABILITIES,
    ContinuationScore,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    Progress,
)
from longread.runs import RunConfig
from tests.helpers import TEST_DATA

STORED = TEST_DATA / "stored_run"


def stored_rows() -> list[dict[str, Any]]:
    lines = (STORED / "run" / "samples.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


class ReplayBackend:
    """Answers a request with the log-probs the stored run has for (its instance, its prefix length)."""

    capabilities = LANGUAGE_MODEL_CAPABILITIES
    name = "random-gpt2"
    max_length = 1024

    def __init__(self, rows: Sequence[dict[str, Any]], prefixes: dict[str, str]) -> None:
        self.by_request = {(prefixes[row["id"]], row["prefix_length"]): row for row in rows}
        self.asked: list[int] = []

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], progress: Progress | None = None
    ) -> list[LoglikelihoodResult]:
        results = []
        for request in requests:
            assert request.max_context_tokens is not None
            self.asked.append(request.max_context_tokens)
            row = self.by_request[(request.context, request.max_context_tokens)]
            assert not row["reused_shorter_length"], "the runner asked for a sample the old loop reused"
            scores = tuple(
                ContinuationScore(
                    logprob=logprob,
                    n_tokens=n,
                    n_tokens_original=original,
                    is_greedy=greedy,
                    scored_text=" ".join(["w"] * row["gold_words"]) if index == 0 else "w",
                )
                for index, (logprob, n, original, greedy) in enumerate(
                    zip(
                        row["logprobs"],
                        row["continuation_tokens"],
                        row["continuation_tokens_original"],
                        row["is_greedy"],
                        strict=True,
                    )
                )
            )
            results.append(
                LoglikelihoodResult(scores, row["context_tokens_original"], row["context_tokens_kept"])
            )
        return results

    def describe(self) -> dict[str, str]:
        config = json.loads((STORED / "run" / "config.json").read_text())["config"]
        return dict(config["model"])


def test_stored_run_replays_exactly(tmp_path: Path) -> None:
    data = tmp_path / "instances.jsonl"
    shutil.copy(STORED / "instances.jsonl", data)
    instances = load_instances(data)
    old_rows = stored_rows()
    backend = ReplayBackend(old_rows, {instance.id: instance.prefix for instance in instances})
    old_config = json.loads((STORED / "run" / "config.json").read_text())
    settings = ChapterBreakSettings(**{
        key: value for key, value in old_config["config"]["settings"].items() if key != "tie_rule"
    })  # fmt: skip
    outcome = run_task(
        ChapterBreakTask(settings), data, backend, tmp_path / "run", RunOptions(show_progress=False)
    )

    # the same result-defining config: an old run can be resumed by the new runner (its hash recomputed
    # without the threads and batch sizes it recorded under its model, which are runtime now)
    new_config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert new_config["config_hash"] == RunConfig.model_validate(old_config["config"]).config_hash
    old_run = tmp_path / "old_run"
    shutil.copytree(STORED / "run", old_run)
    resumed = run_task(
        ChapterBreakTask(settings), data, backend, old_run, RunOptions(show_progress=False, resume=True)
    )
    assert resumed.scored == 0 and resumed.skipped_done == len(old_rows)
    resumed_config = json.loads((old_run / "config.json").read_text())
    assert resumed_config["config_hash"] == new_config["config_hash"]  # recomputed under the current rule
    sessions = resumed_config["sessions"]  # the first, made before sessions were listed, from its config
    assert [session.get("listed_later", False) for session in sessions] == [True, False]
    assert sessions[0]["runtime"] == old_config["config"]["runtime"]

    new_rows = {row["key"]: row for row in map(json.loads, (tmp_path / "run" / "samples.jsonl").open())}
    assert set(new_rows) == {row["key"] for row in old_rows}
    for old in old_rows:
        new = new_rows[old["key"]]
        for field, value in old.items():
            assert new[field] == value, f"{old['key']}: {field} {new[field]!r} != {value!r}"
    assert outcome.reused == sum(1 for row in old_rows if row["reused_shorter_length"]) > 0

    old_results = json.loads((STORED / "run" / "results.json").read_text())["by_prefix_length"]
    for length, old in old_results.items():
        new = outcome.results["by_x"][length]
        accuracy = new["metrics"]["accuracy"]
        assert (accuracy["successes"], accuracy["n"]) == (old["correct"], old["n"])
        assert (accuracy["value"], accuracy["ci_low"], accuracy["ci_high"]) == (
            old["accuracy"],
            old["ci_low"],
            old["ci_high"],
        )
        assert new["metrics"]["word_perplexity"]["value"] == pytest.approx(old["word_perplexity"], rel=1e-12)
        for extra in (
            "ties",
            "truncated_prefix",
            "mean_context_tokens",
            "short_prefix",
            "truncated_candidates",
        ):
            assert new["extras"][extra] == old[extra], (length, extra)
