"""Build ChapterBreak from the whole shared corpus with 2 workers, twice: speed and byte-identity.

    .venv/bin/python bench/build_chapterbreak.py [--corpus ../shared/corpus/gutenberg] [--workers 2]

Prints books/s and instances/s for each run and whether the two outputs are
byte-identical (target: the whole corpus in under 60 s on a 2-core machine).

Old code against new, side by side:

    .venv/bin/python bench/build_chapterbreak.py --against COMMIT [--rounds 2] [--suffix-type cause] …

builds the same set with this checkout's ``src`` and with ``src`` of git commit COMMIT (unpacked into
a temporary folder), alternating them ``--rounds`` times, each run in a child process of its own. Prints
each run's wall time and CPU time (the child's and its workers' user + system time, from the rusage of
waited-for children, so a loaded machine inflates the wall time far more than the CPU time), the
old/new ratios of the medians, and whether every run wrote the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from longread.benchmarks.chapterbreak.build import BuildOptions
from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus" / "gutenberg"


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The build options these arguments ask for (only what both old and new code know)."""
    options: dict[str, Any] = {"seed": args.seed, "prefix_tokens": args.prefix_tokens}
    if args.suffix_type != "chapter":
        options["suffix_type"] = args.suffix_type
    if args.negatives_from != "in-book":
        options["negatives_from"] = args.negatives_from
    if args.tokenizer != "gpt2":
        options["tokenizer"] = args.tokenizer
    return options


def _build(books: list[Path], out: Path, options: dict[str, Any], workers: int) -> dict[str, Any]:
    report = build_chapterbreak(
        list(books), out, BuildOptions(**options), workers=workers, show_progress=False
    )
    return {
        "books": report.books_read,
        "instances": report.instances,
        "seconds": report.seconds,
        "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
    }


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run_child(src: Path, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """One build in a child process running the code under ``src``: its result, wall and CPU time."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    request = json.dumps({"books": str(args.corpus), "out": str(out), "options": _options(args)})
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        request,
        "--workers",
        str(args.workers),
    ]
    cpu, wall = _children_cpu(), time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - wall, _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"the build with {src} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    code = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    if not code.startswith("code: ") or not code.endswith(str(src / "longread" / "__init__.py")):
        raise SystemExit(f"the child did not run the code under {src}: {code!r}")
    return {**result, "wall": wall, "cpu": cpu}


def _child(request: str, workers: int) -> None:
    import longread

    asked = json.loads(request)
    books = sorted(Path(asked["books"]).glob("*.txt.gz"))
    print(f"code: {longread.__file__}", file=sys.stderr)
    print(json.dumps(_build(books, Path(asked["out"]), asked["options"], workers)))


def _old_src(commit: str, into: Path) -> Path:
    """``src`` of ``commit`` unpacked under ``into``."""
    archive = into / "src.tar"
    with archive.open("wb") as fh:
        subprocess.run(["git", "-C", str(ROOT), "archive", commit, "src"], stdout=fh, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def compare(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        variants = {"old": _old_src(args.against, Path(tmp)), "new": ROOT / "src"}
        print(f"options {_options(args)}, {args.workers} workers; old = {args.against}, new = this checkout")
        runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
        for round_ in range(1, args.rounds + 1):
            # Alternate the order, so neither variant always runs after the other.
            for name in ("old", "new") if round_ % 2 else ("new", "old"):
                result = _run_child(variants[name], args, Path(tmp) / f"{name}-{round_}.jsonl")
                runs[name].append(result)
                print(
                    f"round {round_} {name}: {result['instances']} instances, wall {result['wall']:.1f} s, "
                    f"CPU {result['cpu']:.1f} s, sha256 {result['sha256'][:16]}",
                    flush=True,
                )
    digests = {run["sha256"] for results in runs.values() for run in results}
    for measure in ("wall", "cpu"):
        old = statistics.median(run[measure] for run in runs["old"])
        new = statistics.median(run[measure] for run in runs["new"])
        print(f"median {measure}: old {old:.1f} s, new {new:.1f} s — old/new {old / new:.2f}x")
    print(f"byte-identical (every run, both variants): {len(digests) == 1}")


def twice(args: argparse.Namespace) -> None:
    books = sorted(args.corpus.glob("*.txt.gz"))
    digests = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in (1, 2):
            out = Path(tmp) / f"run{run}.jsonl"
            options = BuildOptions(**_options(args))
            report = build_chapterbreak(list(books), out, options, workers=args.workers, show_progress=False)
            digest = hashlib.sha256(out.read_bytes()).hexdigest()
            digests.append(digest)
            size_mb = out.stat().st_size / 1e6
            print(
                f"run {run}: {report.books_read} books, {report.instances} instances, {size_mb:.0f} MB "
                f"in {report.seconds:.1f} s — {report.books_read / report.seconds:.2f} books/s, "
                f"{report.instances / report.seconds:.1f} instances/s (workers={args.workers}); "
                f"sha256 {digest[:16]}"
            )
            if run == 1:
                for line in report.summary_lines()[2:]:
                    print(line)
    print(f"byte-identical across runs: {digests[0] == digests[1]}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--prefix-tokens", type=int, default=8192)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--suffix-type", default="chapter", choices=["chapter", "cause", "dialogue"])
    parser.add_argument("--negatives-from", default="in-book", choices=["in-book", "out-of-book"])
    parser.add_argument("--tokenizer", default="gpt2")
    parser.add_argument("--against", metavar="COMMIT", help="compare with the build code of this git commit")
    parser.add_argument("--rounds", type=int, default=2, help="with --against: runs of each variant")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.workers)
    elif args.against:
        compare(args)
    else:
        twice(args)


if __name__ == "__main__":
    main()
