"""NarrativeQA builder on the repository's own layout: real documents.csv rows, real Gutenberg stories.

``tests/data/muld/narrativeqa`` holds six rows copied from deepmind/narrativeqa's
documents.csv, hand-written questions in qaps.csv's columns and one small
script page; the Gutenberg stories are written into ``tmp/`` at test time from
../shared (the same editions NarrativeQA downloaded: same byte sizes ±1).
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from longread.benchmarks.muld.builders.narrativeqa import build_narrativeqa, split_path
from longread.benchmarks.muld.builders.narrativeqa_story import find_story
from longread.benchmarks.muld.builders.report import LengthFilter, report_path
from longread.benchmarks.muld.records import read_records
from longread.errors import BadInputError
from tests.helpers import TEST_DATA, gutenberg_book, needs_shared

SAMPLE = TEST_DATA / "muld" / "narrativeqa"
PERSUASION = "55d68540c6b86bc90f7a9e630c8b13c0920bf834"
TIME_MACHINE = "72ddeff1fe6bb9841d1c1da4b3031001bf6b1f58"
CALL_OF_THE_WILD = "1fa32a0798f79e13ca92ae84eda9ab3eb12c70a4"
DORIAN_GRAY = "879287f285743b08d86c3bd0831ec1e49fa92e39"
WHITE_FANG = "57669ca4e799e01c9f6e4d1ed2088f7f02765108"
MOVIE = "0025577043f5090cd603c6aea60f26e236195594"
STORIES = {PERSUASION: 105, TIME_MACHINE: 35, DORIAN_GRAY: 174, WHITE_FANG: 910}  # Call of the Wild: missing


def make_checkout(folder: Path, with_stories: bool = True) -> Path:
    shutil.copytree(SAMPLE, folder)
    if with_stories:
        for document_id, book in STORIES.items():
            data = gzip.decompress(gutenberg_book(book).read_bytes())
            (folder / "tmp" / f"{document_id}.content").write_bytes(data)
    return folder


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("nqa")
    checkout = make_checkout(root / "narrativeqa")
    out = root / "out" / "narrativeqa.jsonl.bz2"
    build_narrativeqa(checkout, out)
    return checkout, out


def metadata(path: Path) -> list[dict[str, object]]:
    return [record.metadata_json() for _, record in read_records(path).records]


@needs_shared
def test_one_record_per_question_two_references_split_by_set(built: tuple[Path, Path]) -> None:
    checkout, out = built
    test = read_records(split_path(out, "test"))
    assert not test.problems
    questions = [record.metadata_json()["question"] for _, record in test.records]
    assert questions == [
        "Who does Anne Elliot marry at the end of the story?",
        "In which town does Louisa Musgrove fall from the Cobb, and what happens to her?",
        "What are the two races the Time Traveller finds in the future?",
        "Whom does the Time Traveller save from drowning?",
    ]
    first = test.records[0][1]
    assert first.output == ("Captain Frederick Wentworth", "Wentworth")
    assert test.records[3][1].output == ("Weena", "Weena, one of the Eloi")
    meta = first.metadata_json()
    assert meta["id"] == f"{PERSUASION}:0" and meta["kind"] == "gutenberg" and meta["set"] == "test"
    assert first.input.startswith("Who does Anne Elliot marry at the end of the story?\n\nProduced by Sharon")
    assert first.input.endswith("to hear about new eBooks.")
    # the recorded span is where the story sits in the decoded .content file
    story = first.input.split("\n\n", 1)[1]
    start, end = meta["story_chars"]  # type: ignore[misc]
    decoded = (
        (checkout / "tmp" / f"{PERSUASION}.content").read_bytes().decode("utf-8-sig").replace("\r\n", "\n")
    )
    assert decoded[start:end] == story
    # the Time Machine's marker also occurs in the licence header; the story starts after it
    time_machine = test.records[2][1].input.split("\n\n", 1)[1]
    assert time_machine.startswith("The Time Machine\n\n\nAn Invention")
    assert [m["id"] for m in metadata(split_path(out, "valid"))] == [f"{DORIAN_GRAY}:0"]
    assert [m["id"] for m in metadata(split_path(out, "train"))] == [f"{WHITE_FANG}:0", f"{WHITE_FANG}:1"]


@needs_shared
def test_report_names_every_dropped_question_and_its_reason(built: tuple[Path, Path]) -> None:
    _, out = built
    report = json.loads(report_path(out).read_text())
    assert report["settings"]["tokenizer"] == "gpt2" and report["settings"]["min_tokens"] == 10_000
    assert report["kept"] == 7
    dropped = {entry["item"]: entry["reason"] for entry in report["dropped_items"]}
    assert dropped[f"{CALL_OF_THE_WILD}:0"].startswith("story file missing")
    assert dropped[f"{MOVIE}:0"].startswith("too short:") and "< 10000" in dropped[f"{MOVIE}:0"]
    assert report["dropped_by_reason"] == {"story file missing": 1, "too short": 1}


@needs_shared
def test_same_sources_same_bytes(built: tuple[Path, Path], tmp_path: Path) -> None:
    checkout, out = built
    again = tmp_path / "narrativeqa.jsonl.bz2"
    build_narrativeqa(checkout, again, splits=("test",))
    assert split_path(again, "test").read_bytes() == split_path(out, "test").read_bytes()


def test_script_page_is_reduced_to_text_between_its_markers(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "nqa", with_stories=False)
    out = tmp_path / "nqa.jsonl"
    report = build_narrativeqa(checkout, out, length_filter=LengthFilter(min_tokens=50), splits=("test",))
    records = read_records(split_path(out, "test")).records
    assert [record.metadata_json()["kind"] for _, record in records] == ["movie"]
    story = records[0][1].input.split("\n\n", 1)[1]
    assert story.startswith("Happy Harry Hardon's voice")
    assert story.endswith("transcribed by Martin Eaves")
    assert "window.top" not in story and "<pre>" not in story
    # the four Gutenberg stories are not there: each question is dropped with the file it looked for
    missing = [entry for entry in report.dropped if entry["reason"].startswith("story file missing")]
    assert len(missing) == 5


def test_missing_column_is_an_error_naming_the_file_and_column(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "nqa", with_stories=False)
    qaps = checkout / "qaps.csv"
    lines = qaps.read_text().splitlines()
    lines[0] = lines[0].replace("answer2,", "answer_two,")
    qaps.write_text("\n".join(lines) + "\n")
    with pytest.raises(BadInputError) as caught:
        build_narrativeqa(checkout, tmp_path / "out.jsonl", splits=("test",))
    assert "qaps.csv, line 1" in str(caught.value) and "answer2" in str(caught.value)


def test_bad_rows_are_dropped_with_their_line_and_the_build_goes_on(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "nqa", with_stories=False)
    qaps = checkout / "qaps.csv"
    rows = qaps.read_text().splitlines()
    movie_row = next(row for row in rows if row.startswith(MOVIE))
    rows = [
        rows[0],
        movie_row + ",an extra field",  # line 2: one field too many
        "feedfacefeedfacefeedfacefeedfacefeedface,test,Who?,Nobody,No one,Who ?,Nobody,No one",
        movie_row,
        movie_row.replace(",test,", ",valid,"),  # the document is in the test set
    ]
    qaps.write_text("\n".join(rows) + "\n")
    out = tmp_path / "out.jsonl"
    report = build_narrativeqa(
        checkout, out, length_filter=LengthFilter(min_tokens=50), splits=("test", "valid")
    )
    reasons = {(entry.get("line"), entry["reason"].split(":")[0]) for entry in report.dropped}
    assert (2, "bad row") in reasons
    assert (3, "unknown document") in reasons
    assert (5, "set mismatch") in reasons
    assert len(read_records(split_path(out, "test")).records) == 1


def test_marker_not_found_keeps_that_end_and_says_so() -> None:
    text = "<junk>\nOnce upon a time , there was a fox.\nIt ended well .\nTHE END\n"
    found = find_story(text, "Once upon a", "ended well .")
    assert found.cut(text) == "Once upon a time , there was a fox.\nIt ended well ."
    guessed = find_story(text, "if ( window", "ended well .")
    assert not guessed.start_found and guessed.end_found and guessed.start == 0
    tokenised = find_story('He said: "Go!" And so it ends.', 'said : "', "it ends .")
    assert tokenised.cut('He said: "Go!" And so it ends.') == 'said: "Go!" And so it ends.'


@needs_shared
def test_remembered_gutenberg_books_are_left_out_and_the_probe_reads_the_same_books(tmp_path: Path) -> None:
    """A story that is a Gutenberg book carries its number (the id a probe of the books gives); a probe of
    the built file reads those books and names the film script it cannot key; ``--exclude-remembered``
    leaves out the remembered book's questions (listed apart from the drops), the script kept and counted."""
    import json as json_module

    from typer.testing import CliRunner

    from longread.benchmarks.muld.excerpts import narrativeqa_books
    from longread.cli.app import app

    checkout = make_checkout(tmp_path / "narrativeqa")
    low = LengthFilter(min_tokens=20)  # the script page is short
    out = tmp_path / "all" / "nqa.jsonl"
    build_narrativeqa(checkout, out, length_filter=low)
    test = split_path(out, "test")
    meta = metadata(test)
    assert [m.get("gutenberg_id") for m in meta] == ["105", "105", "35", "35", None]
    assert meta[0]["title"] == "Persuasion (novel)" and meta[4]["kind"] == "movie"
    found = narrativeqa_books(test)
    assert [(b.book.id, b.book.title) for b in found.books] == [
        ("105", "Persuasion (novel)"),
        ("35", "The Time Machine"),
    ]
    story = read_records(test).records[0][1].input.split("\n\n", 1)[1]
    assert found.books[0].book.chapters[0].text == story  # the story, without the question
    assert list(found.left_out) == [MOVIE] and "not a Gutenberg book (movie)" in found.left_out[MOVIE]
    probes = tmp_path / "probes"
    probes.mkdir()
    verdicts = [
        {"book": "105", "title": "Persuasion", "remembered": True, "notes": [],
         "scores": {"cloze": {"value": 0.5, "ci_low": 0.35, "ci_high": 0.65, "n": 30}}},
        {"book": "35", "title": "The Time Machine", "remembered": False, "notes": [], "scores": {}},
    ]  # fmt: skip
    (probes / "books.json").write_text(
        json_module.dumps({"model": {"spec": "smollm2"}, "rule": "cloze>=0.3", "books": verdicts})
    )
    left = tmp_path / "left" / "nqa.jsonl"
    command = ["build", "muld/narrativeqa", "--source", str(checkout), "--out", str(left),
               "--min-tokens", "20", "--exclude-remembered", str(probes)]  # fmt: skip
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    assert "1 of the 2 books probed are remembered by smollm2 (105)" in result.output
    assert "left out on purpose 2" in result.output
    assert [m.get("gutenberg_id") for m in metadata(split_path(left, "test"))] == ["35", "35", None]
    report = json_module.loads(report_path(left).read_text())
    assert report["excluded"] == 2 and {e["gutenberg_id"] for e in report["excluded_items"]} == {"105"}
    assert "remembered by smollm2" in report["excluded_items"][0]["why"]
    assert report["settings"]["excluded_books"] == {"105": report["excluded_items"][0]["why"]}
    assert report["settings"]["not_gutenberg_kept"] == [MOVIE]
    assert report["dropped_by_reason"] == {"story file missing": 1}  # the exclusions are not drops
