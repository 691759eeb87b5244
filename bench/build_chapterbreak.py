"""Build ChapterBreak from the whole shared corpus with 2 workers, twice: speed and byte-identity.

    .venv/bin/python bench/build_chapterbreak.py [--corpus ../shared/corpus/gutenberg] [--workers 2]

Prints books/s and instances/s for each run and whether the two outputs are
byte-identical (target: the whole corpus in under 60 s on a 2-core machine).
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
from pathlib import Path

from longread.benchmarks.chapterbreak.build import BuildOptions
from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "gutenberg"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--prefix-tokens", type=int, default=8192)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    books = sorted(args.corpus.glob("*.txt.gz"))
    options = BuildOptions(seed=args.seed, prefix_tokens=args.prefix_tokens)
    digests = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in (1, 2):
            out = Path(tmp) / f"run{run}.jsonl"
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


if __name__ == "__main__":
    main()
