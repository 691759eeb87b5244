"""Builds on Ray give a one-process build's bytes; a killed worker's book is built again; a cluster joined
by address works through the command line.

The Ray part runs in ``tests/ray_build_child.py`` under ``unshare -n`` with only loopback up, usage stats
off and temp dirs of its own (OFFLINE.md), so nothing Ray does can leave the machine. Four real novels
from ../shared; NarrativeXL with the real SmolLM2; the evaluation through the cluster with a tiny random
GPT-2 (only the bytes matter there).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from longread.benchmarks.narrativexl.build import CACHE_DIR
from longread.documents.corpus import map_books
from longread.scaleout.ray_options import RayOptions, normalise_ray_args, ray_options
from tests.helpers import REPO_ROOT, gutenberg_book, require_ray, run_in_own_network

ROOT = REPO_ROOT
BOOKS = (103, 105, 107, 271)
CHILD_DEADLINE_S = 900


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    require_ray()
    books = tmp_path_factory.mktemp("ray_books")
    for number in BOOKS:
        shutil.copy(gutenberg_book(number), books)
    out = tmp_path_factory.mktemp("ray_build")
    done = run_in_own_network(
        [sys.executable, "-m", "tests.scaleout.ray_build_child", str(books), str(out)], ROOT, CHILD_DEADLINE_S
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return books, out, json.loads((out / "report.json").read_text())


@pytest.mark.parametrize("negatives_from", ["in-book", "out-of-book"])
def test_a_ray_build_is_byte_identical_to_one_process(
    built: tuple[Path, Path, dict[str, Any]], negatives_from: str
) -> None:
    _, out, report = built
    one = (out / f"one-{negatives_from}.jsonl").read_bytes()
    assert one and (out / f"ray-{negatives_from}.jsonl").read_bytes() == one
    assert report[f"ray_{negatives_from}_instances"] == one.count(b"\n") > 100
    assert report[f"ray_{negatives_from}_notes"] == []


def test_a_killed_worker_loses_no_book(built: tuple[Path, Path, dict[str, Any]]) -> None:
    """A worker SIGKILLed while building a book (as the OOM killer would): the book is built again
    elsewhere, the report names it with the cause, the file is the one-process file."""
    _, out, report = built
    assert len(report["killed_pids"]) == 1, "the killer thread found no Ray worker building a book"
    assert (out / "ray-killed.jsonl").read_bytes() == (out / "one-in-book.jsonl").read_bytes()
    assert report["killed_skipped"] == []
    [note] = report["killed_notes"]
    assert ".txt.gz: its Ray worker died (WorkerCrashedError: " in note and "built again" in note


def test_a_book_whose_worker_dies_twice_is_skipped_with_the_cause(
    built: tuple[Path, Path, dict[str, Any]],
) -> None:
    books, _, report = built
    victim = report["twice_victim"]
    outcomes = {item["label"]: item for item in report["twice"]}
    assert sorted(outcomes) == sorted(f"pg{number}.txt.gz" for number in BOOKS)
    [lost] = [item for item in report["twice"] if item["error"]]
    assert lost["label"] == f"pg{victim}.txt.gz" and lost["result"] is None
    assert "its Ray worker died twice while working on it (WorkerCrashedError" in lost["error"]
    assert "give the Ray workers more memory, or build this book without --ray" in lost["error"]
    assert len(lost["notes"]) == 1 and "built again on another worker" in lost["notes"][0]
    # The other books went on, with what one process gives them.
    expected = {Path(o.label).name: o.result for o in map_books(sorted(books.iterdir()), _chapters)}
    for label, item in outcomes.items():
        if item is not lost:
            chapters = expected[label]
            assert chapters and item["result"] == chapters and item["notes"] == []


def test_a_book_that_runs_out_of_memory_is_skipped_with_the_cause(
    built: tuple[Path, Path, dict[str, Any]],
) -> None:
    """Ray's memory monitor (not a signal from the test) kills the worker: the cause says so."""
    _, _, report = built
    [lost] = [item for item in report["oom"] if item["error"]]
    assert lost["label"] == f"pg{report['oom_victim']}.txt.gz" and lost["result"] is None
    assert "its Ray worker died twice while working on it (OutOfMemoryError: " in lost["error"]
    assert "killed due to the node running low on memory" in lost["error"]
    assert all(item["result"] and item["result"] > 0 for item in report["oom"] if item is not lost)


def _chapters(book: Any) -> int:
    return len(book.chapters)


def test_a_cluster_joined_by_address_builds_and_evaluates_the_same_bytes(
    built: tuple[Path, Path, dict[str, Any]],
) -> None:
    """`ray start --head` on 127.0.0.1, then `longread build/eval … --ray 127.0.0.1:PORT`."""
    _, out, report = built
    assert report["cluster_start"]["returncode"] == 0, report["cluster_start"]
    for name in ("build_cluster", "eval_one", "eval_cluster"):
        assert report[name]["returncode"] == 0, report[name]
    assert "Connected to Ray cluster" in report["build_cluster"]["stderr"]
    # the command's settings are the one-process in-book build's
    assert (out / "cli-cluster.jsonl").read_bytes() == (out / "one-in-book.jsonl").read_bytes()
    one, cluster = out / "eval-one", out / "eval-cluster"
    assert (cluster / "results.json").read_bytes() == (one / "results.json").read_bytes()
    runtime = json.loads((cluster / "config.json").read_text())["config"]["runtime"]["backend"]["ray"]
    assert runtime == {"address": "127.0.0.1:6391", "workers": 2, "threads_per_worker": 1}


def test_narrativexl_built_with_ray_replicas_is_byte_identical(
    built: tuple[Path, Path, dict[str, Any]],
) -> None:
    """SmolLM2 summaries generated by 2 Ray replicas (1 thread each) = one process with 1 thread."""
    _, out, report = built

    def files(root: Path) -> dict[str, bytes]:
        return {
            path.relative_to(root).as_posix(): path.read_bytes()
            for path in sorted(root.rglob("*"))
            if path.is_file() and CACHE_DIR not in path.relative_to(root).parts
        }

    one, ray = files(out / "nxl-one"), files(out / "nxl-ray")
    assert any(name.startswith("readalong/") for name in one) and ray == one
    assert report["nxl_ray_calls"] > 0


def test_an_incident_of_a_narrativexl_build_on_ray_is_printed_by_the_command(
    built: tuple[Path, Path, dict[str, Any]],
) -> None:
    """`longread build narrativexl BOOK --ray ADDRESS` while a replica is SIGKILLed answering a call: the
    build finishes on the other replica and the command prints the incident, with its cause."""
    _, _, report = built
    run = report["nxl_cli_incident"]
    assert run["returncode"] == 0, run["stderr"]
    assert len(run["killed_pids"]) == 1, "the killer found no replica answering a call"
    lines = run["stdout"].splitlines()
    assert any(line.startswith("NarrativeXL built in ") for line in lines), run["stdout"]
    [incident] = [line for line in lines if line.startswith("incident")]
    assert incident.startswith(
        "incident (every summary was made all the same): a Ray replica died (ActorDiedError: "
    )
    assert incident.endswith(" generate requests; asked again of another replica"), incident


def test_replicas_default_to_two_on_cpus_and_one_per_gpu(built: tuple[Path, Path, dict[str, Any]]) -> None:
    _, _, report = built
    assert report["default_cpu_workers"] == 2
    assert report["cuda_without_gpu"] == (
        "--device cuda on Ray, but the Ray cluster has no GPU: start its nodes with GPUs "
        "(`ray start … --num-gpus N`) or run on the CPU (--device cpu)"
    )


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["eval", "--ray"], ["eval", "--ray=local"]),
        (["eval", "--ray", "--ray-workers", "2"], ["eval", "--ray=local", "--ray-workers", "2"]),
        (["eval", "--ray", "10.0.0.5:6379"], ["eval", "--ray", "10.0.0.5:6379"]),
        (["eval", "--ray", "ray://head:10001"], ["eval", "--ray", "ray://head:10001"]),
        (["eval", "--ray", "auto"], ["eval", "--ray", "auto"]),
        # A word that is neither an existing path nor an option is the address, checked later (not a
        # local Ray started by surprise for a mistyped address).
        (["eval", "--ray", "head"], ["eval", "--ray", "head"]),
        (["eval", "--ray=h:1"], ["eval", "--ray=h:1"]),
        (["eval", "--", "--ray"], ["eval", "--", "--ray"]),
    ],
)
def test_ray_alone_means_a_local_ray(argv: list[str], expected: list[str]) -> None:
    assert normalise_ray_args(argv) == expected


def test_a_book_folder_after_ray_stays_a_book_folder(tmp_path: Path) -> None:
    books = tmp_path / "books"
    books.mkdir()
    argv = ["build", "chapterbreak", "--ray", str(books), "--out", "x.jsonl"]
    expected = ["build", "chapterbreak", "--ray=local", str(books), "--out", "x.jsonl"]
    assert normalise_ray_args(argv) == expected


def test_ray_missing_is_one_clear_error_not_a_traceback(tmp_path: Path) -> None:
    """`--ray` where Ray is not installed (blocked here): the install hint, exit code 2, no traceback."""
    data = tmp_path / "cb.jsonl"
    data.write_text("")
    script = (
        "import sys\n"
        "sys.modules['ray'] = None\n"
        "from longread.cli import main\n"
        f"sys.argv = ['longread', 'eval', 'chapterbreak', '--data', {str(data)!r}, '--model', 'random:gpt2', "
        f"'--out', {str(tmp_path / 'run')!r}, '--ray']\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert "error: Ray is not installed: pip install 'longread[ray]'" in done.stderr


def test_ray_options_name_what_is_wrong() -> None:
    assert ray_options(None, 2) is None
    assert ray_options("local", 3) == RayOptions(address=None, workers=3)
    assert ray_options("10.0.0.5:6379", 2) == RayOptions(address="10.0.0.5:6379", workers=2)
    with pytest.raises(Exception, match="not a Ray address: give HOST:PORT"):
        ray_options("books/", 2)
    with pytest.raises(Exception, match="at least 1 worker"):
        RayOptions(workers=0)


def test_no_module_imports_ray_until_ray_is_asked_for() -> None:
    """Every longread module imported, and --ray not used: Ray stays unimported (an optional extra)."""
    script = (
        "import importlib, pkgutil, sys, longread\n"
        "for info in pkgutil.walk_packages(longread.__path__, 'longread.'):\n"
        "    importlib.import_module(info.name)\n"
        "print(sorted(name for name in sys.modules if name == 'ray' or name.startswith('ray.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]"
