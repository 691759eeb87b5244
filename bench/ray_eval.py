"""One process vs Ray with 2 workers on ChapterBreak (real instances), and Ray's cost per backend call.

Instances: ChapterBreak built by longread from Pride and Prejudice (shared corpus, pg1342), the
``--instances`` chapters from the 10th on, scored at ``--lengths`` with ``--model`` (default SmolLM2).
What is measured, in one process (the driver):

1. one process, 1 thread; one process, 2 threads (all of this machine);
2. a local Ray (num_cpus=2, no dashboard, usage stats off) with 2 replicas of 1 thread each: the
   start (Ray plus model loads), the run, and whether its ``results.json`` bytes equal the 1-thread
   run's (a replica's threads are part of the model's description, hence of the config hash);
3. the per-call overhead: the same one-request call (``random:gpt2``, a 16-token context) asked
   directly and through a 1-replica Ray backend, ``--calls`` times each; the median difference.

Ray reaches out of the machine unless kept in (OFFLINE.md): the bench re-runs itself inside its own
network namespace (``unshare -n``, loopback only; needs root). The machine has 2 cores shared with
other jobs: the load average is printed at start and end.

    PYTHONPATH=src .venv/bin/python bench/ray_eval.py [--instances 8] [--lengths 256 1024]

Measured 2026-11-23 (2 cores, load average 4.0-4.4 from other jobs; ~8 min in all), SmolLM2, 8
instances x lengths 256, 1024 = 16 samples: one process 1 thread 70.2 s, 2 threads 231.2 s (threads
fighting the other jobs), Ray 2 workers x 1 thread 50.4 s plus 16.4 s to start Ray and the replicas;
Ray's results.json bytes equal the 1-thread run's. Per call (random:gpt2, one request, median of 30):
direct 3.6 ms, through Ray 7.4 ms, so about 4 ms of Ray overhead per backend call.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from own_network import stay_in_own_network

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--instances", type=int, default=8)
    parser.add_argument("--lengths", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args()
    stay_in_own_network()

    from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
    from longread.benchmarks.chapterbreak.io import write_instances
    from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
    from longread.documents.reader import read_book
    from longread.evaluation import RunOptions, run_task
    from longread.models.hf.backend import HFBackend
    from longread.models.registry import load_backend
    from longread.models.requests import LoglikelihoodRequest
    from longread.scaleout.ray_backend import wrap_with_ray
    from longread.scaleout.ray_session import stop_ray

    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    out = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    book = read_book(ROOT.parent / "shared" / "corpus" / "gutenberg" / "pg1342.txt.gz")
    built = build_book(book, BuildOptions(prefix_tokens=max(args.lengths), suffix_tokens=64))
    data = out / "cb.jsonl"
    write_instances(built.instances[10 : 10 + args.instances], data)
    settings = ChapterBreakSettings(prefix_lengths=tuple(sorted(args.lengths)), suffix_tokens=64)
    options = RunOptions(show_progress=False)

    def timed_run(backend: object, name: str) -> float:
        started = time.monotonic()
        run_task(ChapterBreakTask(settings), data, backend, out / name, options)
        return time.monotonic() - started

    one_1 = timed_run(load_backend(args.model, threads=1), "one-1")
    one_2 = timed_run(load_backend(args.model, threads=2), "one-2")
    started = time.monotonic()
    ray_backend = wrap_with_ray(args.model, {"threads": 2}, workers=2)
    ray_start = time.monotonic() - started
    ray_run = timed_run(ray_backend, "ray-2x1")
    same = (out / "ray-2x1" / "results.json").read_bytes() == (out / "one-1" / "results.json").read_bytes()
    ray_backend.shutdown()
    samples = len((out / "one-1" / "samples.jsonl").read_text().splitlines())
    print(f"{args.model}, {args.instances} instances x lengths {args.lengths} = {samples} samples")
    print(f"  one process, 1 thread : {one_1:7.1f} s")
    print(f"  one process, 2 threads: {one_2:7.1f} s")
    print(f"  Ray, 2 workers x 1    : {ray_run:7.1f} s  (+ {ray_start:.1f} s to start Ray and the replicas)")
    print(f"  Ray results.json bytes equal to the 1-thread run's: {same}")

    request = [
        LoglikelihoodRequest(context="It was a truth universally acknowledged", continuations=(" that",))
    ]
    direct = load_backend("random:gpt2", threads=1)
    assert isinstance(direct, HFBackend)
    through = wrap_with_ray("random:gpt2", {"threads": 1}, workers=1)
    direct_s, ray_s = [], []
    for _ in range(args.calls):
        started = time.perf_counter()
        direct.loglikelihood(request)
        direct_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        through.loglikelihood(request)
        ray_s.append(time.perf_counter() - started)
    through.shutdown()
    stop_ray()
    direct_ms, ray_ms = statistics.median(direct_s) * 1000, statistics.median(ray_s) * 1000
    print(f"per call (random:gpt2, 1 request, median of {args.calls}):")
    print(f"  direct {direct_ms:.1f} ms, through Ray {ray_ms:.1f} ms: overhead {ray_ms - direct_ms:.1f} ms")
    print(f"load average at end: {os.getloadavg()[0]:.2f}; runs in {out}")


if __name__ == "__main__":
    main()
