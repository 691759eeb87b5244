"""The Ray part of tests/scaleout/test_ray_build.py, run in its own network namespace.

Arguments: BOOKS OUT. Writes OUT/report.json with what happened:

- ``local``: ChapterBreak built from BOOKS in one process and on a local Ray (2 CPUs), in-book and
  out-of-book negatives (file names under OUT);
- ``killed``: the same Ray build while a thread SIGKILLs the first Ray worker it finds building a
  book (its process title is ``ray::_run_job``), as the kernel's OOM killer would;
- ``twice``: books mapped on Ray with a per-book function that kills its own worker on one book every
  time: that book's outcome and the others';
- ``cluster``: a Ray head started with ``ray start --head`` on 127.0.0.1 (in a directory of its own),
  then ``longread build chapterbreak BOOKS --ray 127.0.0.1:PORT`` (BOOKS relative to the driver's
  directory; ``local``'s in-book file has the same settings) and ``longread eval … --ray 127.0.0.1:PORT``
  through the CLI, next to the same eval in one process (``ray stop`` at the end stops only this process
  namespace's Ray);
  then ``longread build narrativexl BOOK --ray 127.0.0.1:PORT`` (a tiny random Llama, one scene) while
  the first replica seen answering a call is SIGKILLed: what the command prints (its incident line);
- ``narrativexl``: a small NarrativeXL build with SmolLM2 in one process (1 thread) and on Ray replicas
  made without a worker count (2 on CPUs, 1 thread each);
- ``default_workers``: replicas made without a worker count for a CUDA model;
- ``oom``: a local Ray whose memory monitor kills at 3 GB above the node's use at start, and a
  per-book function that takes up to 10 GB on one book: Ray's own out-of-memory kill, twice.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from longread.benchmarks.chapterbreak.build import BuildOptions
from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak
from longread.documents.book import Book
from longread.documents.corpus import iter_books, map_books
from longread.scaleout.ray_books import RayMapper
from longread.scaleout.ray_options import RayOptions
from longread.scaleout.ray_session import ray_session

OPTIONS = BuildOptions(seed=7, prefix_tokens=1024, suffix_tokens=64, negatives=3)
RAY = RayOptions(workers=2)
HEAD_PORT = 6391
TASK_TITLE = b"ray::_run_job"


def kill_first_book_worker(stop: threading.Event, killed: list[int], title: bytes = TASK_TITLE) -> None:
    """SIGKILL the first process whose title starts with ``title`` (default: it runs a book task; polls
    /proc every 20 ms)."""
    while not stop.is_set() and not killed:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if cmdline.startswith(title):
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(int(entry.name))
                return
        time.sleep(0.02)


def dies_on(book: Book, victim: str) -> int:
    """Per-book work that kills its own process on ``victim`` (every time) and counts chapters otherwise."""
    if book.id == victim:
        os.kill(os.getpid(), signal.SIGKILL)
    return len(book.chapters)


HOG_BLOCK = 128 * 2**20
HOG_LIMIT = 10 * 2**30
OOM_MARGIN = 3 * 2**30
"""The out-of-memory Ray kills workers once the node uses 3 GB more than before it started (room for Ray's
own processes and the other books' workers, a few hundred MB each); the victim takes up to 10 GB."""


def hogs_memory_on(book: Book, victim: str) -> int:
    """Per-book work that, on ``victim``, takes memory 128 MB at a time (up to 10 GB, each page touched)."""
    if book.id != victim:
        return len(book.chapters)
    blocks: list[bytearray] = []
    while len(blocks) * HOG_BLOCK < HOG_LIMIT:
        block = bytearray(HOG_BLOCK)
        block[::4096] = b"\1" * len(block[::4096])
        blocks.append(block)
        time.sleep(0.02)
    return -1  # never killed: the test fails on this


def local(books: list[Path], out: Path, report: dict[str, Any]) -> None:
    for negatives_from in ("in-book", "out-of-book"):
        options = BuildOptions(**{**OPTIONS.__dict__, "negatives_from": negatives_from})
        one = out / f"one-{negatives_from}.jsonl"
        on_ray = out / f"ray-{negatives_from}.jsonl"
        build_chapterbreak(books, one, options, workers=1, show_progress=False)
        started = time.monotonic()
        built = build_chapterbreak(books, on_ray, options, show_progress=False, ray=RAY)
        report[f"ray_{negatives_from}_seconds"] = time.monotonic() - started
        report[f"ray_{negatives_from}_instances"] = built.instances
        report[f"ray_{negatives_from}_notes"] = built.worker_notes


def killed(books: list[Path], out: Path, report: dict[str, Any]) -> None:
    stop, victims = threading.Event(), list[int]()
    killer = threading.Thread(target=kill_first_book_worker, args=(stop, victims), daemon=True)
    killer.start()
    try:
        built = build_chapterbreak(books, out / "ray-killed.jsonl", OPTIONS, show_progress=False, ray=RAY)
    finally:
        stop.set()
        killer.join()
    report["killed_pids"] = victims
    report["killed_notes"] = built.worker_notes
    report["killed_skipped"] = [skipped.reason for skipped in built.skipped_books]


def twice(books: list[Path], report: dict[str, Any]) -> None:
    victim = next(book.id for book in iter_books([books[1]]) if isinstance(book, Book))
    per_book = functools.partial(dies_on, victim=victim)
    outcomes = list(map_books(books, per_book, mapper=RayMapper(RAY)))
    report["twice_victim"] = victim
    report["twice"] = [
        {
            "label": Path(o.label).name,
            "result": o.result,
            "error": str(o.error) if o.error else None,
            "notes": list(o.notes),
        }
        for o in outcomes
    ]


def cluster(books: list[Path], out: Path, report: dict[str, Any]) -> None:
    bin_dir = Path(sys.executable).parent
    temp_dir = tempfile.mkdtemp(prefix="lr-rc-")
    address = f"127.0.0.1:{HEAD_PORT}"
    start = [
        str(bin_dir / "ray"), "start", "--head", "--node-ip-address=127.0.0.1", f"--port={HEAD_PORT}",
        "--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp_dir}",
    ]  # fmt: skip
    started = subprocess.run(start, cwd=temp_dir, capture_output=True, text=True, timeout=180)
    report["cluster_start"] = {"returncode": started.returncode, "stderr": started.stderr[-2000:]}
    if started.returncode != 0:
        return
    try:
        longread = str(bin_dir / "longread")
        # Books named relative to the driver's directory, the head started elsewhere: workers must still
        # open the driver's files.
        book_dir = books[0].parent
        build = [longread, "build", "chapterbreak", book_dir.name, "--seed", "7", "--prefix-tokens", "1024"]
        build += ["--suffix-tokens", "64", "--negatives", "3", "--quiet"]
        # the same settings as ``local``'s in-book build: its one-process file is what the cluster must give
        commands = {"build_cluster": [*build, "--out", str(out / "cli-cluster.jsonl"), "--ray", address]}
        evaluate = [longread, "eval", "chapterbreak", "--data", str(out / "one-in-book.jsonl"), "--model"]
        evaluate += ["random:gpt2", "--prefix-lengths", "64,256", "--limit", "6", "--quiet", "--threads"]
        commands["eval_one"] = [*evaluate, "1", "--out", str(out / "eval-one")]
        commands["eval_cluster"] = [*evaluate, "2", "--out", str(out / "eval-cluster"), "--ray", address]
        commands["eval_cluster"] += ["--ray-workers", "2"]
        for name, command in commands.items():
            began = time.monotonic()
            done = subprocess.run(command, cwd=book_dir.parent, capture_output=True, text=True, timeout=600)
            report[name] = {
                "returncode": done.returncode,
                "stdout": done.stdout[-3000:],
                "stderr": done.stderr[-3000:],
                "seconds": time.monotonic() - began,
            }
        narrativexl_incident(longread, books[0], out, address, report)
    finally:
        subprocess.run([str(bin_dir / "ray"), "stop", "--force"], capture_output=True, timeout=120)
        shutil.rmtree(temp_dir, ignore_errors=True)


REPLICA_CALL_TITLE = b"ray::Replica.call"
"""The process title of a model replica (``scaleout.ray_backend.Replica``) while it answers a call."""


def narrativexl_incident(longread: str, book: Path, out: Path, address: str, report: dict[str, Any]) -> None:
    """``longread build narrativexl BOOK --ray ADDRESS`` with a tiny random Llama (SmolLM2's tokenizer and
    chat template) on 2 replicas, 2 scenes; the first replica seen answering a call is SIGKILLed: what
    the command prints."""
    command = [longread, "build", "narrativexl", str(book), "--out", str(out / "nxl-cli"), "--model"]
    command += ["random:llama", "--max-scenes", "1", "--min-scenes", "1", "--no-hierarchical", "--quiet"]
    command += ["--ray", address, "--ray-workers", "2"]
    stop, victims = threading.Event(), list[int]()
    killer = threading.Thread(
        target=kill_first_book_worker, args=(stop, victims, REPLICA_CALL_TITLE), daemon=True
    )
    killer.start()
    began = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    finally:
        stop.set()
        killer.join()
    report["nxl_cli_incident"] = {
        "returncode": done.returncode,
        "stdout": done.stdout[-3000:],
        "stderr": done.stderr[-3000:],
        "seconds": time.monotonic() - began,
        "killed_pids": victims,
    }


def narrativexl(books: list[Path], out: Path, report: dict[str, Any]) -> None:
    from longread.benchmarks.narrativexl.build import NarrativeXLBuildSettings, build_narrativexl
    from longread.benchmarks.narrativexl.scenes import SceneSettings
    from longread.benchmarks.narrativexl.summaries import SummarySettings
    from longread.models.registry import load_backend
    from longread.scaleout.ray_backend import wrap_with_ray

    settings = NarrativeXLBuildSettings(
        seed=3,
        max_scenes=2,
        scenes=SceneSettings(chars=1500),  # half the authors' scene: each summary reads half as much
        summaries=SummarySettings(
            summary_max_tokens=16, distortion_max_tokens=16, hierarchical_max_tokens=16
        ),
    )
    book = [books[0]]
    began = time.monotonic()
    build_narrativexl(
        book, out / "nxl-one", load_backend("smollm2", threads=1), settings, show_progress=False
    )
    report["nxl_one_seconds"] = time.monotonic() - began
    replicas = wrap_with_ray("smollm2", {"threads": 2}, workers=None)  # the default: 2 on CPUs
    report["default_cpu_workers"] = len(replicas.actors)
    began = time.monotonic()
    build_narrativexl(book, out / "nxl-ray", replicas, settings, show_progress=False)
    report["nxl_ray_seconds"] = time.monotonic() - began
    report["nxl_ray_calls"] = replicas.calls
    replicas.shutdown()


def memory_in_use() -> tuple[int, int]:
    """(bytes used, bytes Ray counts as the limit): the cgroup's when it has a limit (Ray uses that), else
    the machine's."""
    cgroup = Path("/sys/fs/cgroup")
    limit = (cgroup / "memory.max").read_text().strip() if (cgroup / "memory.max").is_file() else "max"
    if limit.isdigit():
        return int((cgroup / "memory.current").read_text()), int(limit)
    meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    total, available = (int(meminfo[key].split()[0]) * 1024 for key in ("MemTotal", "MemAvailable"))
    return total - available, total


def out_of_memory(books: list[Path], report: dict[str, Any]) -> None:
    """A Ray whose memory monitor kills at 3 GB above today's use; one book takes more, twice."""
    used, total = memory_in_use()
    threshold = (used + OOM_MARGIN) / total
    # Ray reads these names exactly as written.
    os.environ["RAY_memory_usage_threshold"] = f"{threshold:.4f}"  # noqa: SIM112
    os.environ["RAY_memory_monitor_refresh_ms"] = "100"  # noqa: SIM112
    victim = next(book.id for book in iter_books([books[2]]) if isinstance(book, Book))
    with ray_session(None, 2):
        per_book = functools.partial(hogs_memory_on, victim=victim)
        outcomes = list(map_books(books, per_book, mapper=RayMapper(RAY)))
    report["oom_victim"] = victim
    report["oom"] = [
        {"label": Path(o.label).name, "result": o.result, "error": str(o.error) if o.error else None}
        for o in outcomes
    ]


def default_workers(report: dict[str, Any]) -> None:
    """``--ray-workers`` not given: a CUDA model on a Ray without GPUs is refused (2 replicas on CPUs: the
    NarrativeXL build's, above)."""
    from longread.errors import LongreadError
    from longread.scaleout.ray_backend import wrap_with_ray

    try:
        wrap_with_ray("random:gpt2", {"threads": 2, "device": "cuda"}, workers=None)
        report["cuda_without_gpu"] = None
    except LongreadError as exc:
        report["cuda_without_gpu"] = str(exc)


def main(book_dir: Path, out: Path) -> None:
    books = sorted(book_dir.glob("*.txt.gz"))
    report: dict[str, Any] = {}
    with ray_session(None, 2):
        local(books, out, report)
        killed(books, out, report)
        twice(books, report)
        narrativexl(books, out, report)
        default_workers(report)
    cluster(books, out, report)
    out_of_memory(books, report)  # last: its memory threshold stays in this process's environment
    (out / "report.json").write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
