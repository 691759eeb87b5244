"""MuLD's published layout: .bz2 and plain read alike, bad lines named by file and line (reading goes on),
byte-stable writing, and the question told from the document by a recorded rule."""

from __future__ import annotations

import bz2
import json
from pathlib import Path

import pytest

from longread.benchmarks.muld.records import MuldRecord, RecordProblem, read_records, write_records
from longread.benchmarks.muld.tasks.inputs import split_input, to_instance
from longread.errors import BadInputError
from tests.models_fixtures import book_text

BOOK = book_text()[20_000:60_000]


def _records() -> list[MuldRecord]:
    return [
        MuldRecord(BOOK, ("an abstract",), json.dumps({"id": "a"})),
        MuldRecord("Who is Darcy?\n\n" + BOOK, ("a gentleman", "Mr Darcy"), json.dumps({"id": "b"})),
        MuldRecord(BOOK[:500], ("x",)),
    ]


@pytest.mark.parametrize("name", ["d.jsonl", "d.jsonl.bz2"])
def test_write_then_read_gives_the_same_records(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    assert write_records(path, _records()) == 3
    table = read_records(path)
    assert [record for _, record in table.records] == _records()
    assert [line for line, _ in table.records] == [1, 2, 3]
    assert table.problems == []
    first = path.read_bytes()
    write_records(path, _records())
    assert path.read_bytes() == first  # byte-identical (bz2 writes no timestamp)
    if name.endswith(".bz2"):
        assert first[:3] == b"BZh"


def test_published_shapes_are_read_as_the_authors_loader_reads_them(tmp_path: Path) -> None:
    # The authors' loader: a missing metadata is "", a string output becomes a one-element list.
    path = tmp_path / "pub.json.bz2"
    lines = [
        {"input": "doc one", "output": "one answer"},
        {"input": "doc two", "output": ["a", "b"], "metadata": "m"},
    ]
    path.write_bytes(bz2.compress("".join(json.dumps(row) + "\n" for row in lines).encode()))
    records = [record for _, record in read_records(path).records]
    assert records == [MuldRecord("doc one", ("one answer",), None), MuldRecord("doc two", ("a", "b"), "m")]


def test_bad_lines_are_named_and_the_rest_is_read(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    good = json.dumps({"input": "fine", "output": ["ok"]})
    path.write_bytes(
        b"\n".join(
            [
                good.encode(),
                json.dumps({"output": ["no input"]}).encode(),
                json.dumps({"input": "x", "output": []}).encode(),
                '{"input": "caf\xe9", "output": ["x"]}'.encode("latin-1"),
                b'{"input": "broken", ',
                json.dumps({"input": "", "output": ["x"]}).encode(),
                json.dumps(["not", "an", "object"]).encode(),
                good.encode(),
            ]
        )
    )
    table = read_records(path)
    assert [line for line, _ in table.records] == [1, 8]
    problems = {problem.line: problem.problem for problem in table.problems}
    assert problems[2] == "no 'input' field"
    assert problems[3] == "empty reference list"
    assert problems[4].startswith("not UTF-8 (byte 0xe9")
    assert problems[5].startswith("not valid JSON")
    assert problems[6] == "'input' is empty or not a string"
    assert "not an object" in problems[7]
    assert str(table.problems[0]).startswith(f"{path}, line 2: no 'input' field — ")


def test_unreadable_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="file not found"):
        read_records(tmp_path / "missing.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(BadInputError, match="holds no records"):
        read_records(empty)
    broken = tmp_path / "cut.jsonl.bz2"
    broken.write_bytes(bz2.compress(b'{"input": "a", "output": ["b"]}\n' * 50)[:40])
    with pytest.raises(BadInputError, match="cannot decompress"):
        read_records(broken)


def test_question_split_rules() -> None:
    by_meta = MuldRecord("Who?\n\n" + BOOK, ("x",), json.dumps({"question": "Who?"}))
    assert split_input("narrativeqa", by_meta)[::2] == ("Who?", "metadata")
    bom = MuldRecord("Where does Elizabeth walk? \ufeffThe Project Gutenberg text", ("x",))
    question, document, rule = split_input("narrativeqa", bom)
    assert (question, document, rule) == ("Where does Elizabeth walk?", "The Project Gutenberg text", "bom")
    mojibake = MuldRecord("Who wrote it? ï»¿Chapter 1", ("x",))
    assert split_input("narrativeqa", mojibake) == ("Who wrote it?", "Chapter 1", "bom")
    html = MuldRecord("Who dies? <html><body>INT. HOUSE", ("x",))
    assert split_input("narrativeqa", html) == ("Who dies?", "<html><body>INT. HOUSE", "html")
    character = MuldRecord("Darcy\n" + BOOK, ("Hero",))
    assert split_input("character-archetype", character)[::2] == ("Darcy", "first-line")
    assert split_input("vlsp", MuldRecord(BOOK, ("x",))) == (None, BOOK, "none")
    with pytest.raises(ValueError, match="cannot tell the question"):
        split_input("hotpotqa", MuldRecord("no question here at all " * 100, ("x",)))


def test_an_unsplittable_line_is_a_problem_not_a_guess(tmp_path: Path) -> None:
    parsed = to_instance("hotpotqa", MuldRecord("plain text " * 200, ("x",)), tmp_path / "h.jsonl", 7)
    assert isinstance(parsed, RecordProblem) and parsed.line == 7
    ok = to_instance("vlsp", MuldRecord(BOOK, ("abs",)), tmp_path / "vlsp_test.jsonl.bz2", 3)
    assert not isinstance(ok, RecordProblem) and ok.id == "vlsp_test:3"


def test_streamed_bz2_equals_one_shot_compression(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl.bz2"
    write_records(path, iter(_records() * 30))
    plain = "".join(json.dumps(r.as_json(), ensure_ascii=False) + "\n" for r in _records() * 30).encode()
    assert path.read_bytes() == bz2.compress(plain, compresslevel=9)
