"""Context controls through the runner (``longread eval --context … --keep-last K``) with SmolLM2 on real
ChapterBreak instances from two Gutenberg books: the no-op control scores to the bit, a real one keeps
the intact run's keys and pair ids and records what it did, the paired report compares them, and every
bad request is refused with its reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.io import write_instances
from longread.cli.app import app
from longread.documents.reader import read_book
from longread.evaluation import RunOptions, make_task, run_task
from longread.evaluation.controls import ControlError, ControlledTask, ControlSettings
from longread.models.requests.control import ids_sha256
from longread.report.build import build_report
from longread.runs.inputs_log import INPUTS_FILE, read_inputs
from tests.helpers import gutenberg_book, needs_shared, unboxed
from tests.models_fixtures import backend

QUIET = RunOptions(show_progress=False)
SETTINGS = {"prefix_lengths": "64,128", "suffix_tokens": "16"}

pytestmark = needs_shared


@pytest.fixture(scope="module")
def two_books(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two instances from each of Frankenstein and Pride and Prejudice, prefixes of 256 tokens."""
    instances = []
    for book in (84, 1342):
        instances += build_book(read_book(gutenberg_book(book)), BuildOptions(prefix_tokens=256)).instances[
            2:4
        ]
    path = tmp_path_factory.mktemp("cb") / "cb.jsonl"
    write_instances(instances, path)
    return path


def _rows(run: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    return sorted(rows, key=lambda row: row["key"])


def _run(
    data: Path, out: Path, control: ControlSettings | None, options: RunOptions = QUIET
) -> list[dict[str, Any]]:
    task: Any = make_task("chapterbreak", SETTINGS)
    if control is not None:
        task = ControlledTask(task, control)
    outcome = run_task(task, data, backend("smollm2"), out, options)
    assert not outcome.errors, outcome.errors
    return _rows(out)


@pytest.fixture(scope="module")
def intact(two_books: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "intact"
    _run(two_books, out, None)
    return out


def test_keeping_the_whole_prefix_scores_as_the_intact_run_to_the_bit(
    two_books: Path, intact: Path, tmp_path: Path
) -> None:
    one_each = tmp_path / "one_each.jsonl"  # one instance of each book: bit-equality needs no more
    one_each.write_text("".join(two_books.read_text().splitlines(keepends=True)[::2]))
    for kind in ("shuffle", "replace", "none"):
        rows = _run(one_each, tmp_path / kind, ControlSettings(kind, keep_last=100_000))  # type: ignore[arg-type]
        keys = {r["key"] for r in rows}
        before = [row for row in _rows(intact) if row["key"] in keys]
        assert [r["key"] for r in rows] == [r["key"] for r in before] and len(rows) == 4
        for a, b in zip(rows, before, strict=True):
            assert a["logprobs"] == b["logprobs"] and a["pair_id"] == b["pair_id"], (kind, a["key"])
            assert (a["context_control"], a["keep_last"], a["tokens_perturbed"]) == (kind, 100_000, 0)
        config = json.loads((tmp_path / kind / "config.json").read_text())["config"]
        assert config["settings"]["context_control"] == kind  # result-defining: in the hashed settings


def test_replacing_the_distant_prefix_keeps_keys_records_donors_and_pairs_in_the_report(
    two_books: Path, intact: Path, tmp_path: Path
) -> None:
    out = tmp_path / "replace"
    rows = _run(
        two_books,
        out,
        ControlSettings("replace", keep_last=32, seed=0),
        RunOptions(show_progress=False, save_inputs=True),
    )
    inputs = {line["key"]: line for line in read_inputs(out / INPUTS_FILE)}
    assert sorted(inputs) == [row["key"] for row in rows]
    for row in rows:  # what --save-inputs says was read is what the row's hash says was read
        assert ids_sha256(inputs[row["key"]]["context"]) == row["read_sha256"]  # SmolLM2 reads no start token
        assert [len(c) for c in inputs[row["key"]]["continuations"]] == row["continuation_tokens"]
    assert not (intact / INPUTS_FILE).exists()  # without the option nothing changes
    before = {row["key"]: row for row in _rows(intact)}
    assert sorted(before) == sorted(row["key"] for row in rows)
    for row in rows:
        intact_row = before[row["key"]]
        assert row["pair_id"] == intact_row["pair_id"]
        assert row["tokens_perturbed"] == intact_row["context_tokens_kept"] - 32 > 0
        (donor,) = row["donors"]
        assert donor.split("/")[1] != row["book_id"]  # another book lends the tokens
        assert row["logprobs"] != intact_row["logprobs"] and len(row["read_sha256"]) == 64
    again = _run(two_books, tmp_path / "again", ControlSettings("replace", keep_last=32, seed=0))
    assert [r["read_sha256"] for r in again] == [r["read_sha256"] for r in rows]  # seeded
    other_seed = _run(two_books, tmp_path / "seed1", ControlSettings("replace", keep_last=32, seed=1))
    assert [r["read_sha256"] for r in other_seed] != [r["read_sha256"] for r in rows]
    report = build_report([intact, out], tmp_path / "report")
    (paired_64, paired_128) = report.paired
    assert paired_64.paired == paired_128.paired == 4
    assert "Paired with the first run" in report.markdown.read_text()
    assert "(replace, last 32 kept)" in report.markdown.read_text()


def test_controls_that_cannot_apply_are_refused_with_their_reason(two_books: Path, tmp_path: Path) -> None:
    with pytest.raises(ControlError, match="must be 0 or more"):
        ControlSettings("shuffle", keep_last=-1)
    with pytest.raises(ControlError, match="unknown context control 'reverse'"):
        ControlSettings("reverse")  # type: ignore[arg-type]
    with pytest.raises(ControlError, match="muld/style-change asks only for pair_scores"):
        ControlledTask(make_task("muld/style-change"), ControlSettings("shuffle"))
    one_book = tmp_path / "one.jsonl"
    one_book.write_text("".join(two_books.read_text().splitlines(keepends=True)[:2]))
    with pytest.raises(ControlError, match="this data holds 1; use --context shuffle or none"):
        ControlledTask(make_task("chapterbreak"), ControlSettings("replace")).load(one_book)


def test_the_command_line_refuses_bad_settings_and_a_resume_under_another_control(
    two_books: Path, intact: Path, tmp_path: Path
) -> None:
    base = ["eval", "chapterbreak", "--data", str(two_books), "--model", "smollm2", "--quiet"]

    def run(*args: str) -> tuple[int, str]:
        """The command in this process: (exit code, its output as one line, whatever box and width the
        terminal library drew it in)."""
        done = CliRunner().invoke(app, [*base, *args])
        return done.exit_code, unboxed(done.output)

    code, said = run("--out", str(tmp_path / "a"), "--context", "shuffle", "--keep-last", "-1")
    assert code == 2 and "--keep-last must be 0 or more tokens" in said
    code, said = run("--out", str(tmp_path / "b"), "--keep-last", "64")
    assert code == 2 and "add --context shuffle, replace or none" in said
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    options = ["-o", "prefix_lengths=64,128", "-o", "suffix_tokens=16"]
    code, said = run("--out", str(intact), *options, "-o", "context=shuffle", "-o", "keep_last=8", "--resume")
    assert code == 2, said[-2000:]
    assert "settings.context_control: 'intact'" not in said  # intact runs carry no control …
    assert "cannot resume" in said and "context_control" in said  # … but it is named
