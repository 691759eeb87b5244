"""One process vs 2 worker processes vs Ray with 2 workers on a ChapterBreak build, and Ray's cost per book.

Books: the first ``--books`` Gutenberg novels of the shared corpus (sorted by file name). What is
measured, in one process (the driver), side by side:

1. ``build_chapterbreak`` with ``workers=1`` (one process) and ``workers=2`` (a process pool);
2. the same build on a local Ray (num_cpus=2, no dashboard, usage stats off): the start of Ray, the
   build, and whether the output bytes equal the one-process file;
3. the per-task overhead: the same books mapped with a per-book function that does nothing (the book
   is still read), directly and as Ray tasks; the difference per book.

The bench re-runs itself inside its own network namespace (``unshare -n``, loopback only; needs root).
The machine has 2 cores shared with other jobs: the load average is printed at start and end.

    PYTHONPATH=src .venv/bin/python bench/ray_build.py [--books 24]

Measured 2026-11-23, 99 books, quiet machine (load 0.1): one process 17.5 s, 2 processes 9.8 s (x1.79),
Ray 2 workers 10.8 s (x1.62) + 3.3 s to start Ray, bytes equal; reading only 4.8 s vs 2.6 s on Ray
(about 2 ms per book task). Under another job's load: 19.6 / 10.6 / 14.9 s.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from own_network import stay_in_own_network

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
CORPUS = ROOT.parent / "shared" / "corpus" / "gutenberg"


def nothing(book: object) -> int:
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", type=int, default=24)
    parser.add_argument("--prefix-tokens", type=int, default=8192)
    args = parser.parse_args()
    stay_in_own_network()

    from longread.benchmarks.chapterbreak.build import BuildOptions
    from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak
    from longread.documents.corpus import map_books
    from longread.scaleout.ray_books import RayMapper
    from longread.scaleout.ray_options import RayOptions
    from longread.scaleout.ray_session import ray_session

    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    books = sorted(CORPUS.glob("*.txt.gz"))[: args.books]
    out = Path(tempfile.mkdtemp(prefix="bench-ray-build-"))
    options = BuildOptions(prefix_tokens=args.prefix_tokens)
    ray = RayOptions(workers=2)

    def timed(name: str, workers: int = 1, on: RayOptions | None = None) -> float:
        started = time.monotonic()
        report = build_chapterbreak(
            books, out / f"{name}.jsonl", options, workers=workers, show_progress=False, ray=on
        )
        seconds = time.monotonic() - started
        print(f"  {name:<14} {seconds:7.1f} s  {report.instances} instances from {report.books_used} books")
        return seconds

    print(f"ChapterBreak build of {len(books)} books, prefix {args.prefix_tokens} tokens:")
    one = timed("one-process", workers=1)
    pool = timed("2-processes", workers=2)
    started = time.monotonic()
    with ray_session(None, 2):
        ray_start = time.monotonic() - started
        on_ray = timed("ray-2-workers", on=ray)
        same = (out / "ray-2-workers.jsonl").read_bytes() == (out / "one-process.jsonl").read_bytes()
        started = time.monotonic()
        list(map_books(books, nothing, mapper=RayMapper(ray)))
        ray_nothing = time.monotonic() - started
    started = time.monotonic()
    list(map_books(books, nothing))
    direct_nothing = time.monotonic() - started
    print(f"  (+ {ray_start:.1f} s to start Ray); Ray output bytes equal the one-process file: {same}")
    print(f"  speed-up over one process: 2 processes x{one / pool:.2f}, Ray 2 workers x{one / on_ray:.2f}")
    per_book_ms = (ray_nothing - direct_nothing / 2) / len(books) * 1000
    print(
        f"reading only ({len(books)} books): one process {direct_nothing:.1f} s, as Ray tasks "
        f"{ray_nothing:.1f} s: Ray's cost ≈ {per_book_ms:.0f} ms per book task beyond half the direct time"
    )
    print(f"load average at end: {os.getloadavg()[0]:.2f}; files in {out}")


if __name__ == "__main__":
    main()
