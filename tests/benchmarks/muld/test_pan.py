"""PAN style-change layout: export/import round trip on documents built from real books, bad truths named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longread.benchmarks.muld.builders.report import LengthFilter
from longread.benchmarks.muld.builders.style_change import build_style_change, split_paths
from longread.benchmarks.muld.pan import (
    PanTruth,
    export_pan,
    import_pan,
    read_pan_folder,
    split_paragraphs,
    truth_json,
)
from longread.benchmarks.muld.records import MuldRecord, read_records, write_records
from longread.errors import BadInputError
from tests.helpers import gutenberg_book, needs_shared

pytestmark = needs_shared


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Style-change documents from four real novels by four authors (train split only)."""
    out = tmp_path_factory.mktemp("pan") / "sc.jsonl.bz2"
    build_style_change(
        [gutenberg_book(n) for n in (215, 35, 219, 558)],
        out,
        length_filter=LengthFilter(min_tokens=1_500),
        seed=5,
        documents={"train": 5, "validation": 0, "test": 0},
        test_fraction=0,
        validation_fraction=0,
    )
    return split_paths(out)["train"]


@pytest.mark.parametrize("suffix", [".jsonl.bz2", ".jsonl"])
def test_export_then_import_gives_back_the_same_bytes(built: Path, tmp_path: Path, suffix: str) -> None:
    source = built
    if suffix == ".jsonl":
        source = tmp_path / "plain.jsonl"
        write_records(source, (r for _, r in read_records(built).records))
    folder = tmp_path / "pan"
    assert export_pan(source, folder) == []
    back = tmp_path / f"back{suffix}"
    read = import_pan(folder, back)
    assert not read.problems and len(read.records) == 5
    assert back.read_bytes() == source.read_bytes()


def test_the_pan_files_are_what_pan_tools_read(built: Path, tmp_path: Path) -> None:
    export_pan(built, tmp_path)
    records = [r for _, r in read_records(built).records]
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(
        f"{kind}problem-{n}.{ext}"
        for n in range(1, 6)
        for kind, ext in (("", "txt"), ("truth-", "json"), ("meta-", "json"))
    )
    for number, record in enumerate(records, 1):
        lines = (tmp_path / f"problem-{number}.txt").read_text(encoding="utf-8").split("\n")
        assert lines[-1] == "" and lines[:-1] == record.input.split("\n")
        truth = json.loads((tmp_path / f"truth-problem-{number}.json").read_text(encoding="utf-8"))
        assert list(truth) == ["authors", "changes", "paragraph-authors", "multi-author"]
        assert truth["multi-author"] == int(truth["authors"] > 1)
        assert len(truth["changes"]) == len(lines) - 2
        assert (
            json.dumps({k: truth[k] for k in ("authors", "changes", "paragraph-authors")}) == record.output[0]
        )


def test_truth_numbering_follows_first_appearance() -> None:
    truth = PanTruth.of_labels(["Wells", "London", "Wells", "Wells", "Conrad"])
    assert truth.paragraph_authors == (1, 2, 1, 1, 3)
    assert truth.changes == (1, 1, 0, 1)
    assert (
        truth_json(truth) == '{"authors": 3, "changes": [1, 1, 0, 1], "paragraph-authors": [1, 2, 1, 1, 3]}'
    )


BAD_TRUTHS = {
    "changes-length": (
        {"authors": 2, "changes": [1, 0], "paragraph-authors": [1, 2, 2, 2]},
        "'changes' has 2 entries but the problem has 4 paragraphs (expected 3",
    ),
    "paragraph-authors-length": (
        {"authors": 2, "changes": [1, 0, 0], "paragraph-authors": [1, 2, 2]},
        "'paragraph-authors' has 3 entries but the problem has 4 paragraphs",
    ),
    "changes-disagree": (
        {"authors": 2, "changes": [1, 1, 0], "paragraph-authors": [1, 2, 2, 2]},
        "'changes' disagrees with 'paragraph-authors' at 1 boundaries (first: after paragraph 2",
    ),
    "authors-count": (
        {"authors": 3, "changes": [1, 0, 0], "paragraph-authors": [1, 2, 2, 2]},
        "'authors' is 3 but 'paragraph-authors' names 2 distinct authors",
    ),
    "multi-author": (
        {"authors": 2, "changes": [1, 0, 0], "paragraph-authors": [1, 2, 2, 2], "multi-author": 0},
        "'multi-author' is 0 but 'authors' is 2",
    ),
    "single-author-change": (
        {"authors": 1, "changes": [0, 1, 0]},
        "'authors' is 1 but 'changes' marks a change",
    ),
    "not-binary": ({"authors": 2, "changes": [0, 2, 0]}, "'changes' holds 2"),
    "no-authors": ({"changes": [0, 0, 0]}, "'authors' must be a whole number"),
}


def write_problem(folder: Path, number: int, paragraphs: list[str], truth: object) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"problem-{number}.txt").write_text("\n".join(paragraphs) + "\n", encoding="utf-8")
    text = truth if isinstance(truth, str) else json.dumps(truth)
    (folder / f"truth-problem-{number}.json").write_text(text, encoding="utf-8")


@pytest.mark.parametrize("case", sorted(BAD_TRUTHS))
def test_each_bad_truth_is_named_and_the_folder_is_still_read(built: Path, tmp_path: Path, case: str) -> None:
    record = next(r for _, r in read_records(built).records)
    paragraphs = split_paragraphs(record.input)[:4]
    truth, message = BAD_TRUTHS[case]
    write_problem(
        tmp_path, 1, paragraphs, {"authors": 1, "changes": [0, 0, 0], "paragraph-authors": [1, 1, 1, 1]}
    )
    write_problem(tmp_path, 2, paragraphs, truth)
    write_problem(
        tmp_path, 10, paragraphs, {"authors": 2, "changes": [0, 1, 0]}
    )  # PAN 2023: no paragraph-authors
    read = read_pan_folder(tmp_path)
    assert [name for name, _ in read.records] == ["problem-1.txt", "problem-10.txt"]
    [problem] = read.problems
    assert problem.path == str(tmp_path / "truth-problem-2.json")
    assert message in str(problem)


def test_missing_or_broken_truth_files_and_folders(tmp_path: Path) -> None:
    write_problem(tmp_path, 1, ["One paragraph here.", "And another one."], "{not json")
    (tmp_path / "problem-2.txt").write_text("Alone.\n", encoding="utf-8")
    problems = read_pan_folder(tmp_path).problems
    assert "not valid JSON" in str(problems[0]) and problems[0].path == str(tmp_path / "truth-problem-1.json")
    assert "missing" in str(problems[1]) and problems[1].path == str(tmp_path / "truth-problem-2.json")
    with pytest.raises(BadInputError, match="no usable problem"):
        import_pan(tmp_path, tmp_path / "out.jsonl")
    with pytest.raises(BadInputError, match="is not a folder"):
        read_pan_folder(tmp_path / "truth-problem-1.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInputError, match=r"holds no problem-N\.txt files"):
        read_pan_folder(tmp_path / "empty")


def test_export_skips_a_record_whose_truth_does_not_match_and_names_its_line(
    built: Path, tmp_path: Path
) -> None:
    records = [r for _, r in read_records(built).records]
    broken = MuldRecord(records[1].input, ('{"authors": 1, "changes": []}',), records[1].metadata)
    source = tmp_path / "mixed.jsonl"
    write_records(source, [records[0], broken, records[2]])
    problems = export_pan(source, tmp_path / "pan")
    [problem] = problems
    assert f"{source}, line 2" in str(problem) and "'changes' has 0 entries" in str(problem)
    assert sorted(p.name for p in (tmp_path / "pan").glob("problem-*.txt")) == [
        "problem-1.txt",
        "problem-2.txt",
    ]
    with pytest.raises(BadInputError, match=r"already holds problem-N\.txt files"):
        export_pan(source, tmp_path / "pan")
