"""ChapterBreak on Ray (2 replicas, local Ray in its own network namespace) gives a one-process run's bytes.

The Ray part runs in ``tests/ray_eval_child.py`` under ``unshare -n`` with only loopback up, usage stats
off and a temp dir of its own (OFFLINE.md), so nothing Ray does can leave the machine.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.io import write_instances
from longread.documents.reader import read_book
from tests.helpers import REPO_ROOT, gutenberg_book, require_ray, run_in_own_network

ROOT = REPO_ROOT
INSTANCES = 6
CHILD_DEADLINE_S = 900


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    require_ray()
    out = tmp_path_factory.mktemp("ray_eval")
    built = build_book(read_book(gutenberg_book(1342)), BuildOptions(prefix_tokens=2048, suffix_tokens=32))
    data = out / "cb.jsonl"
    # Late chapters: their prefixes are cut at every length but the longest, so some samples are reused.
    write_instances(built.instances[10 : 10 + INSTANCES], data)
    done = run_in_own_network(
        [sys.executable, "-m", "tests.scaleout.ray_eval_child", str(data), str(out)], ROOT, CHILD_DEADLINE_S
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return out, json.loads((out / "report.json").read_text())


def _sorted_rows(run: Path) -> list[str]:
    return sorted((run / "samples.jsonl").read_text().splitlines())


def test_ray_run_is_byte_identical_to_one_process(runs: tuple[Path, dict[str, Any]]) -> None:
    out, report = runs
    one, ray = out / "one", out / "ray"
    assert (ray / "results.json").read_bytes() == (one / "results.json").read_bytes()
    rows = _sorted_rows(one)
    assert len(rows) >= INSTANCES * 2 and _sorted_rows(ray) == rows
    assert report["ray"]["rescheduled"] == 0 and report["ray"]["live"] == 2
    ray_config = json.loads((ray / "config.json").read_text())
    assert ray_config["config"]["runtime"]["backend"]["ray"] == {
        "address": "local",
        "workers": 2,
        "threads_per_worker": 1,
    }


def test_a_context_control_on_ray_gives_the_one_process_bytes(runs: tuple[Path, dict[str, Any]]) -> None:
    out, _ = runs
    one, ray = out / "shuffled_one", out / "shuffled_ray"
    assert (ray / "results.json").read_bytes() == (one / "results.json").read_bytes()
    rows = _sorted_rows(one)
    assert _sorted_rows(ray) == rows and rows
    assert all(json.loads(row)["context_control"] == "shuffle" for row in rows)
    assert any(json.loads(row)["tokens_perturbed"] > 0 for row in rows)


def test_a_killed_worker_loses_nothing(runs: tuple[Path, dict[str, Any]]) -> None:
    out, report = runs
    killed = report["killed"]
    assert killed["live"] == 1 and killed["rescheduled"] >= 1, killed
    assert len(killed["lost"]) == 1 and "Actor" in killed["lost"][0]
    assert (out / "killed" / "results.json").read_bytes() == (out / "one" / "results.json").read_bytes()
    assert _sorted_rows(out / "killed") == _sorted_rows(out / "one")
    # The run names what happened and to which samples (never in results.json: same bytes).
    incidents = [json.loads(line) for line in (out / "killed" / "incidents.jsonl").read_text().splitlines()]
    # One replica answered one request of that call (2 requests, one per replica): only its sample is named.
    assert len(incidents) == 1 and len(incidents[0]["keys"]) == 1, incidents
    assert incidents[0]["keys"][0] in {json.loads(row)["key"] for row in _sorted_rows(out / "one")}
    assert "a Ray replica died (ActorDiedError: The actor died" in incidents[0]["message"]
    assert "asked again of another replica" in incidents[0]["message"]
    assert not (out / "one" / "incidents.jsonl").exists()


def test_no_worker_left_stops_the_run_and_resume_finishes_it(runs: tuple[Path, dict[str, Any]]) -> None:
    out, report = runs
    stopped = report["stopped"]
    assert stopped["error"] is not None and "every Ray worker" in stopped["error"]
    assert 0 < stopped["rows_before_resume"] == stopped["resumed_skipped_done"]
    assert (out / "stopped" / "results.json").read_bytes() == (out / "one" / "results.json").read_bytes()
    assert _sorted_rows(out / "stopped") == _sorted_rows(out / "one")


def test_a_failing_request_fails_its_sample_only_with_the_same_message(
    runs: tuple[Path, dict[str, Any]],
) -> None:
    out, _ = runs
    one, ray = out / "strict_one", out / "strict_ray"
    errors = sorted((one / "errors.jsonl").read_text().splitlines())
    assert errors and all("ContextTooLongError" in line for line in errors)
    assert sorted((ray / "errors.jsonl").read_text().splitlines()) == errors
    assert _sorted_rows(ray) == _sorted_rows(one) != []
    assert (ray / "results.json").read_bytes() == (one / "results.json").read_bytes()


def test_a_model_that_does_not_load_is_a_clear_error(runs: tuple[Path, dict[str, Any]]) -> None:
    _, report = runs
    assert report["bad_model"] == (
        "the Ray replicas of 'hf:/no/such/model' could not start: longread.models.errors.ModelLoadError: "
        "/no/such/model: folder does not exist — check the path given after hf:"
    )


def test_the_command_line_runs_on_ray_with_the_same_results(runs: tuple[Path, dict[str, Any]]) -> None:
    """`longread eval … --ray` (local Ray, own network namespace) equals `longread eval …` in one process."""
    out, _ = runs
    data = out / "cb.jsonl"
    common = ["eval", "chapterbreak", "--data", str(data), "--model", "random:gpt2", "--prefix-lengths", "64",
              "--limit", "2", "--quiet"]  # fmt: skip
    # Rows: one process with 1 thread = 2 replicas × 1 (the same float order). Threads and replicas are
    # runtime, so the two runs have one identity (config_hash); that a thread count alone leaves it
    # unchanged is tests/runs/test_timing.py's (a --threads 1 run resumed with --threads 2).
    one_process = ["--threads", "1"]
    on_ray = ["--threads", "2", "--ray", "--ray-workers", "2"]
    for name, extra in (("cli-one", one_process), ("cli-ray", on_ray)):
        command = [sys.executable, "-m", "longread.cli", *common, "--out", str(out / name), *extra]
        done = run_in_own_network(command, ROOT, CHILD_DEADLINE_S)
        assert done.returncode == 0, done.stderr[-4000:]
    one, ray = out / "cli-one", out / "cli-ray"
    assert (ray / "results.json").read_bytes() == (one / "results.json").read_bytes()
    assert _sorted_rows(ray) == _sorted_rows(one)
    config = json.loads((ray / "config.json").read_text())
    assert config["config"]["runtime"]["backend"]["ray"]["workers"] == 2
    assert config["config"]["runtime"]["backend"]["threads"] == "1"  # per replica
    hashes = {
        json.loads((out / name / "config.json").read_text())["config_hash"] for name in ("cli-one", "cli-ray")
    }
    assert len(hashes) == 1


def test_calibrate_and_ablate_on_ray_give_the_one_process_bytes(runs: tuple[Path, dict[str, Any]]) -> None:
    """The calibration's copy is planted in the model's tokens, counted by a replica when the model runs on
    Ray (the caller holds no model): the planted data, every run and the verdicts are the one process's."""
    out, _ = runs
    one, ray = out / "cal_one", out / "cal_ray"
    assert (ray / "planted.jsonl").read_bytes() == (one / "planted.jsonl").read_bytes()
    assert (ray / "calibration.json").read_bytes() == (one / "calibration.json").read_bytes()
    for run in ("unplanted/intact", "planted/intact", "planted/none-k32", "planted/none-k256"):
        assert _sorted_rows(ray / run) == _sorted_rows(one / run) and _sorted_rows(one / run), run
    calibration = json.loads((one / "calibration.json").read_text())
    assert calibration["distances"] == [128] and calibration["rows"]
    # the ablation's page names its runs' folders; all else is the same bytes
    pages = {name: (out / name / "context_use.json").read_text() for name in ("abl_one", "abl_ray")}
    ablated = {name: page.replace(str(out / name), "OUT") for name, page in pages.items()}
    assert ablated["abl_ray"] == ablated["abl_one"] and '"OUT/intact"' in ablated["abl_one"]
    assert _sorted_rows(out / "abl_ray" / "shuffle-k16") == _sorted_rows(out / "abl_one" / "shuffle-k16")


def test_a_horizon_campaign_on_ray_gives_the_one_process_bytes(runs: tuple[Path, dict[str, Any]]) -> None:
    """``longread horizon`` on replicas: the same instances, planted copies, runs it chose, page."""
    out, _ = runs
    one, ray = out / "hz_one", out / "hz_ray"
    assert (ray / "horizon.json").read_bytes() == (one / "horizon.json").read_bytes()
    assert (ray / "horizon.md").read_bytes() == (one / "horizon.md").read_bytes()
    planted = "tiny/L512/planted-d128.jsonl"
    assert (ray / planted).read_bytes() == (one / planted).read_bytes() and (one / planted).stat().st_size
    runs_one = sorted(p.parent.relative_to(one) for p in one.glob("tiny/**/samples.jsonl"))
    runs_ray = sorted(p.parent.relative_to(ray) for p in ray.glob("tiny/**/samples.jsonl"))
    assert runs_ray == runs_one and len(runs_one) >= 4  # intact, the planted intact, at least two K
    for run in runs_one:
        assert _sorted_rows(ray / run) == _sorted_rows(one / run) and _sorted_rows(one / run), run
    page = json.loads((one / "horizon.json").read_text())
    assert [a["prefix_length"] for a in page["answers"]] == [512] and page["answers"][0]["keeps"]
