"""The ChapterBreak corpus campaign kept in ``results/horizon-corpus`` rebuilds from the books its README
names, with the command it gives: the build writes the file whose sha256 the README states, and the
horizon chooses from it the instances every run there read (the sha256 in each run's ``config.json``).
So the campaign's logs resume and replay on another machine; a change to the builder or to the choice
that moves either fails here, naming what moved."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from typer.testing import CliRunner

from longread.cli.app import app
from longread.evaluation.runner import RunOptions
from longread.horizon.benchmarks import horizon_task
from longread.horizon.plan import HorizonPlan
from longread.runs.config import file_sha256
from tests.helpers import REPO_ROOT, gutenberg_book, needs_shared

RESULTS = REPO_ROOT / "results" / "horizon-corpus"
README = RESULTS / "README.md"


def stated_books() -> list[int]:
    """The book ids the README's "The books" section lists (its first fenced block)."""
    section = README.read_text(encoding="utf-8").split("## The books", 1)[1]
    block = section.split("```", 2)[1]
    return [int(word) for word in block.split()]


def stated(pattern: str) -> str:
    """What the README states where ``pattern``'s group is (its commands, the file's size and sha256)."""
    found = re.search(pattern, README.read_text(encoding="utf-8"))
    assert found, f"{README} no longer states {pattern!r}"
    return found.group(1)


def read_data(run_config: Path) -> str:
    return str(json.loads(run_config.read_text(encoding="utf-8"))["config"]["data"]["sha256"])


@needs_shared
def test_the_corpus_campaign_rebuilds_from_the_books_its_readme_names(tmp_path: Path) -> None:
    books = tmp_path / "books"
    books.mkdir()
    ids = stated_books()
    assert len(ids) == 94
    for book_id in ids:
        assert gutenberg_book(book_id).is_file(), f"the corpus lacks pg{book_id}: the campaign cannot rebuild"
        (books / f"pg{book_id}.txt.gz").symlink_to(gutenberg_book(book_id))
    options = stated(r"longread build chapterbreak BOOKS/ --out cb-corpus\.jsonl (.*)\n").split()
    data = tmp_path / "cb-corpus.jsonl"
    built = CliRunner().invoke(
        app, ["build", "chapterbreak", str(books), "--out", str(data), *options, "--quiet"]
    )
    assert built.exit_code == 0, built.output
    count = int(stated(r"# ([\d,]+) instances from 92 of 94 books").replace(",", ""))
    assert len(data.read_text(encoding="utf-8").splitlines()) == count
    assert file_sha256(data) == stated(r"sha256 ([0-9a-f]{64})"), (
        "the books the README names no longer build the campaign's file: the builder changed what it "
        "writes, so results/horizon-corpus no longer rebuilds (run the campaign again, or keep the builder)"
    )

    adapter = horizon_task("chapterbreak", {})
    sample = int(stated(r"--sample (\d+)"))
    lengths = tuple(int(n) for n in stated(r"--prefix-lengths ([\d,]+)").split(","))
    chosen = adapter.choose(data, RunOptions(sample=sample, show_progress=False), HorizonPlan(lengths))
    assert len(chosen) == sample == 120 and len({adapter.book_of(i) for i in chosen}) == 92
    instances = "".join(line + "\n" for line in adapter.lines(chosen)).encode("utf-8")
    # Every run on the chosen instances themselves: the intact runs and each K's (planted runs read copies).
    runs = [
        c for c in RESULTS.glob("*/L*/*/config.json") if c.parent.name == "intact" or "-k" in c.parent.name
    ]
    assert {c.parent.parent.parent.name for c in runs} == {"smollm2", "gemma3"}
    assert {read_data(c) for c in runs} == {hashlib.sha256(instances).hexdigest()}, (
        "the horizon now chooses other instances from the same file: results/horizon-corpus's runs read "
        "the ones chosen before"
    )
