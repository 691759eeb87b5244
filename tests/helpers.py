"""Shared test helpers: where the shared corpus is, and small synthetic books."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from longread.documents.book import Book, Chapter
from longread.processes.lifetime import dying_with_parent

REPO_ROOT = Path(__file__).resolve().parents[1]
TEST_DATA = Path(__file__).resolve().parent / "data"
SHARED = REPO_ROOT.parent / "shared"
GUTENBERG = SHARED / "corpus" / "gutenberg"

needs_shared = pytest.mark.skipif(
    not GUTENBERG.is_dir(), reason=f"the shared corpus is not at {GUTENBERG} (CI always has it)"
)


def unboxed(text: str) -> str:
    """A command's message as one line: out of the box rich draws around it, its wrapping undone."""
    return " ".join(text.replace("│", " ").split())


def gutenberg_book(book_id: int) -> Path:
    return GUTENBERG / f"pg{book_id}.txt.gz"


def synthetic_book(n_chapters: int, *, book_id: str = "synthetic", style: str = "CHAPTER {roman}.") -> Book:
    from longread.documents.chapters.headings import format_number

    chapters = []
    for index in range(1, n_chapters + 1):
        heading = style.format(roman=format_number(index, "roman-upper"), arabic=index)
        body = "\n\n".join(
            f"Paragraph {p} of chapter {index}. It rained; the ship sailed on and on past the harbour."
            for p in range(1, 30)
        )
        chapters.append(Chapter(heading=heading, text=body))
    return Book(
        id=book_id,
        title=f"Book {book_id}",
        author="Anon",
        language="en",
        source="<synthetic>",
        chapters=tuple(chapters),
        metadata={"collection": "pg19"},
    )


VLSP = SHARED / "corpus" / "vlsp"


def copy_theses(folder: Path, theses: Sequence[str]) -> Path:
    """The named real VLSP theses (main text and abstracts) copied into ``folder``: a builder's source."""
    folder.mkdir(parents=True, exist_ok=True)
    for thesis in theses:
        files = sorted(VLSP.glob(f"{thesis}.*"))
        assert files, f"no thesis {thesis} in {VLSP}"
        for path in files:
            shutil.copy(path, folder / path.name)
    return folder


def run_in_own_network(
    argv: Sequence[str], root: Path, deadline_s: float
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` inside network and process namespaces of its own (``unshare -n -p -f --mount-proc``):
    only loopback up, Ray's usage stats off and ``root`` on the path, so whatever Ray does no packet can
    leave the machine, and what the test kills or stops (``ray stop``) is only its own. The namespace
    ends with this process: ``unshare`` dies with it and takes the namespace's first process with it
    (``--kill-child``), and the kernel ends every other process of the namespace then."""
    # root/src first: the checkout under test, even where the venv's editable install points elsewhere.
    path = os.pathsep.join([str(root / "src"), str(root)])
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled", "PYTHONPATH": path}
    return subprocess.run(
        own_network_command(argv), cwd=root, env=env, capture_output=True, text=True, timeout=deadline_s,
        preexec_fn=dying_with_parent(),
    )  # fmt: skip


OWN_NAMESPACES = ("unshare", "-n", "-p", "-f", "--mount-proc", "--kill-child")


def own_network_command(argv: Sequence[str]) -> list[str]:
    """``argv`` in namespaces of its own, loopback up; every process in them ends with ``unshare``.

    The shell stays the namespace's first process (no ``exec``): the first process of a PID namespace
    inherits its orphans, and a shell reaps them. Python in that place would not, and every Ray process
    orphaned by a stop would stay a zombie that ``ray stop`` waits out (measured: 24 s against 2 s)."""
    return [*OWN_NAMESPACES, "sh", "-c", f"ip link set lo up && {shlex.join(argv)}; exit $?"]


def require_ray() -> None:
    """Fail (never skip) when Ray is missing: `make test` installs it."""
    found = subprocess.run([sys.executable, "-c", "import ray"], capture_output=True)
    if found.returncode != 0:
        pytest.fail("Ray is not installed in this environment: `make test` installs it (the `ray` extra)")


PAUSED_CLI = Path(__file__).resolve().parent / "paused_cli.py"


def start_paused(command: Sequence[str], rows: int, marker: Path) -> subprocess.Popen[bytes]:
    """Start ``python -m longread.cli ARGS…`` (``command``) so that it stands still after storing exactly
    ``rows`` sample rows and then writes ``marker`` (``tests/paused_cli.py``)."""
    python, flag, module, *args = command
    assert (flag, module) == ("-m", "longread.cli"), command
    return subprocess.Popen(
        [python, str(PAUSED_CLI), str(rows), str(marker), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def kill_after_rows(process: subprocess.Popen[bytes], samples: Path, marker: Path) -> int:
    """SIGKILL a run started by :func:`start_paused` once it stands still; the rows kept.

    The wait ends when the marker is written or the process has ended by itself (then the caller's count
    shows the run never paused); 600 s is only a guard against a hung child, never a speed bound."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and process.poll() is None and not marker.exists():
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait()
    return len(samples.read_text().splitlines()) if samples.exists() else 0


def write_negative_variants(folder: Path) -> tuple[Path, Path]:
    """Three synthetic books built twice, with in-book and with out-of-book negatives (the same
    boundaries, other instance counts): ``folder/in.jsonl`` and ``folder/out.jsonl``."""
    from longread.benchmarks.chapterbreak.build import BuildOptions, build_book, pool_entries
    from longread.benchmarks.chapterbreak.io import write_instances

    books = [synthetic_book(9, book_id=name) for name in ("a", "b", "c")]
    in_book = BuildOptions(prefix_tokens=300, suffix_tokens=24)
    out_of_book = BuildOptions(prefix_tokens=300, suffix_tokens=24, negatives_from="out-of-book")
    inside, outside = [], []
    for book in books:
        inside += build_book(book, in_book).instances
        pool = [start for other in books if other is not book for start in pool_entries(other, out_of_book)]
        outside += build_book(book, out_of_book, out_of_book_pool=pool).instances
    assert len(outside) > len(inside)
    write_instances(inside, folder / "in.jsonl")
    write_instances(outside, folder / "out.jsonl")
    return folder / "in.jsonl", folder / "out.jsonl"
