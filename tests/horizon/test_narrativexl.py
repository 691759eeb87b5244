"""``longread horizon narrativexl`` on real novels with SmolLM2: each question a reading of its own, read
cut-left at the window L (intact runs too), the true summary planted in the book before the question,
the search, the gate, the shortcut check and the resume."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from longread.benchmarks.narrativexl.load import load_reading_books
from longread.benchmarks.narrativexl.questions import make_readalong_questions
from longread.benchmarks.narrativexl.schema import ReadingBook
from longread.cli.app import app
from longread.runs.layout import read_samples
from tests.benchmarks.narrativexl.books import OTHER_BOOKS, make_book
from tests.horizon.test_campaign import check_search

pytestmark = pytest.mark.slow
WINDOW = 192
BOOKS = (84, *OTHER_BOOKS[:4])
DECOY_BOOKS = (*OTHER_BOOKS[4:], 103, 107)
"""The other-book decoys' books, outside the data: ``replace`` never lends a question tokens of a book
its options come from, and with every other book of five lending it a decoy none would be left."""
SMALL = [
    "--prefix-lengths", str(WINDOW), "--distances", "96", "--copy-tokens", "64", "--min-keep", "96",
    "--refine", "1", "--sample", "15", "--quiet",
]  # fmt: skip
"""A copy of the true summary (whole: two sentences, up to 64 tokens) 96 tokens before the question, 15
questions of 5 books; K is searched on 96 and 0."""


def build(folder: Path) -> Path:
    """Five novels of 8 scenes (~700 tokens each) with the authors' questions, their other-book decoys
    from four more; a scene's summary is its first two sentences (tests/benchmarks/narrativexl/books.py)."""
    folder.mkdir()
    for main in BOOKS:
        summaries = make_book(main, 8)
        others = [make_book(g, 5) for g in DECOY_BOOKS]
        questions = make_readalong_questions(summaries, others, np.random.default_rng(main)).questions
        book = ReadingBook(
            book_id=summaries.book_id,
            scenes=tuple(scene.text for scene in summaries.scenes),
            questions=questions,
        )
        (folder / f"{book.book_id}.json").write_text(book.model_dump_json(), encoding="utf-8")
    return folder


def test_a_narrativexl_campaign_reads_each_question_cut_left_plants_its_summary_and_resumes(
    tmp_path: Path,
) -> None:
    data = build(tmp_path / "nxl")
    out = tmp_path / "horizon"
    command = ["horizon", "narrativexl", "--data", str(data), "--model", "smollm2", "--out", str(out), *SMALL]

    planned = CliRunner().invoke(app, [*command, "--dry-run"])
    assert planned.exit_code == 0, planned.output
    assert "NarrativeXL read-along, 15 questions from 5 books" in planned.output
    assert "K searched from 96, 0" in planned.output and not out.exists()

    done = CliRunner().invoke(app, command)
    assert done.exit_code == 0, done.output
    chosen = load_reading_books(out / "instances.jsonl")
    assert len(chosen) == 15 and all(len(reading.questions) == 1 for reading in chosen)
    books = {reading.questions[0].book_id for reading in chosen}
    assert len(books) == 5

    length = out / "smollm2" / f"L{WINDOW}"
    intact = list(read_samples(length / "intact"))
    assert len(intact) == 15
    assert {row["context_control"] for row in intact} == {"intact"}  # read cut-left, as the controls read
    assert {row["window"] for row in intact} == {WINDOW} and all(
        row["tokens_seen"] <= WINDOW for row in intact
    )
    for row in read_samples(length / "replace-k0"):  # every token replaced, never by the question's own book
        assert row["donors"] and all(donor.split("@")[0] != row["book_id"] for donor in row["donors"])
        assert row["tokens_perturbed"] > WINDOW // 2

    placements = [
        json.loads(line) for line in (length / "planted-d96.placements.jsonl").read_text().splitlines()
    ]
    planted = load_reading_books(length / "planted-d96.jsonl")
    assert len(planted) == len(placements) > 0
    for reading, where in zip(
        sorted(planted, key=lambda r: r.questions[0].id),
        sorted(placements, key=lambda r: r["id"]),
        strict=True,
    ):
        question = reading.questions[0]
        assert question.id == where["id"] and question.id.endswith("#planted-d96")
        copy = question.options[question.answer].text[: where["copy_chars"]]
        text = reading.scenes[-1]
        assert text[where["at_char"] : where["at_char"] + len(copy)] == copy
        assert 96 <= where["distance_tokens"] <= 96 + 64

    report = json.loads((out / "horizon.json").read_text())
    assert report["task"] == "narrativexl"
    (answer,) = report["answers"]
    assert answer["paired"] == 15 and answer["books"] == 5
    check_search(answer)
    (copy,) = answer["copy"]
    assert copy["distance"] == 96 and copy["paired"] == len(planted)
    # SmolLM2 answers "None of the above." to every unplanted question here (its 4 words score a higher
    # mean log-prob than any two-sentence summary), and the true summary once it is planted (measured:
    # 13 of 15; gain +0.87 [+0.49, +1.00]); replacing everything loses it, so the gate detects
    assert copy["verdict"] == "copies" and answer["calibrated"]
    assert answer["gate"]["verdict"] == "detects" and answer["gate"]["position"] == "perturbed"
    assert answer["intact"] <= report["shortcuts"][str(WINDOW)]["chance"]
    assert "is no better than chance" in answer["sentence"]  # so the sentence says it had little to lower
    markdown = (out / "horizon.md").read_text()
    assert (
        "NarrativeXL read-along" in markdown
        and "| L | questions | longest | shortest | none of the above |" in markdown
    )

    again = CliRunner().invoke(app, command)  # resumed: every run finished, nothing scored again
    assert again.exit_code == 0
    assert json.loads((out / "horizon.json").read_text()) == report
    assert "scored" not in again.output.replace("0 scored", "")
