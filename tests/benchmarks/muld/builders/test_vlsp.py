"""MuLD VLSP builder on the 20 real theses in ../shared/corpus/vlsp."""

from __future__ import annotations

import bz2
import gzip
import json
import shutil
from pathlib import Path

import pytest

from longread.benchmarks.muld.builders.report import LengthFilter
from longread.benchmarks.muld.builders.vlsp import build_vlsp, reference_in_input
from longread.benchmarks.muld.records import read_records
from longread.errors import BadInputError
from tests.helpers import SHARED

VLSP = SHARED / "corpus" / "vlsp"
pytestmark = pytest.mark.skipif(not VLSP.is_dir(), reason=f"the VLSP theses are not at {VLSP}")


def thesis_ids() -> list[str]:
    return sorted(p.name.removesuffix(".main.txt.gz") for p in VLSP.glob("*.main.txt.gz"))


def read_gz(path: Path) -> str:
    """A VLSP file as the builder reads it (some files have CRLF line ends; the builder writes LF)."""
    return gzip.decompress(path.read_bytes()).decode("utf-8-sig").replace("\r\n", "\n")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    out = tmp_path_factory.mktemp("vlsp") / "vlsp.jsonl.bz2"
    report = build_vlsp([VLSP], out)
    return out, report.as_json()


def test_all_twenty_theses_kept_with_both_abstracts_as_references(
    built: tuple[Path, dict[str, object]],
) -> None:
    out, report = built
    ids = thesis_ids()
    assert len(ids) == 20
    assert report["kept"] == 20 and report["dropped"] == 0
    records = read_records(out)
    assert not records.problems
    assert [r.metadata_json()["id"] for _, r in records.records] == ids  # sorted by id
    length = LengthFilter()
    for _, record in records.records:
        meta = record.metadata_json()
        paper = meta["id"]
        assert record.input == read_gz(VLSP / f"{paper}.main.txt.gz")
        expected = [read_gz(VLSP / f"{paper}.abstract.txt.gz").strip()]
        long = VLSP / f"{paper}.abstract-long.txt.gz"
        if long.exists():
            expected.append(read_gz(long).strip())
        assert list(record.output) == expected
        assert meta["has_long_abstract"] is (len(expected) == 2)
        assert meta["tokens"] == length.count(record.input) >= 10_000
        assert meta["tokenizer"] == "gpt2"
        assert meta["files"]["main"] == f"{paper}.main.txt.gz"


def test_two_builds_are_byte_identical_and_plain_equals_bz2(
    built: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    out, _ = built
    again = tmp_path / "vlsp.jsonl.bz2"
    plain = tmp_path / "vlsp.jsonl"
    build_vlsp([VLSP], again)
    assert again.read_bytes() == out.read_bytes()
    assert (tmp_path / "vlsp.report.json").read_bytes() == out.with_name("vlsp.report.json").read_bytes()
    build_vlsp([VLSP], plain)
    assert bz2.decompress(out.read_bytes()) == plain.read_bytes()
    assert [r for _, r in read_records(plain).records] == [r for _, r in read_records(out).records]


def test_no_thesis_starts_with_its_abstract_and_a_copied_one_is_found(
    built: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    _, report = built
    summary = report["references_in_input"]
    assert isinstance(summary, dict)
    assert summary["references"] == 40
    # Measured on the 20 theses: no abstract is verbatim in its thesis (nor at its start); a few
    # share single sentences with it.
    assert summary["verbatim"] == 0 and summary["verbatim_at_start"] == 0
    assert 0 < summary["with_a_sentence_in_input"] < 40
    paper = thesis_ids()[0]
    abstract = read_gz(VLSP / f"{paper}.abstract.txt.gz")
    main = read_gz(VLSP / f"{paper}.main.txt.gz")
    copied = reference_in_input(abstract, "Abstract\n\n" + abstract + "\n\n" + main)
    assert copied["verbatim"] and copied["at_start"]
    assert copied["sentences_in_input"] == copied["sentences"] > 0
    late = reference_in_input(abstract, main + "\n\n" + abstract)
    assert late["verbatim"] and not late["at_start"]


def copy_thesis(
    paper: str, folder: Path, *, parts: tuple[str, ...] = ("main", "abstract", "abstract-long")
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for part in parts:
        source = VLSP / f"{paper}.{part}.txt.gz"
        if source.exists():
            shutil.copy(source, folder / source.name)


def test_each_kind_of_bad_thesis_is_dropped_with_its_reason(tmp_path: Path) -> None:
    ids = thesis_ids()
    folder = tmp_path / "in"
    copy_thesis(ids[0], folder)  # kept
    copy_thesis(ids[1], folder, parts=("abstract", "abstract-long"))  # no main
    copy_thesis(ids[2], folder, parts=("main",))  # no abstract
    copy_thesis(ids[3], folder, parts=("main", "abstract-long"))
    (folder / f"{ids[3]}.abstract.txt").write_text("  \n", encoding="utf-8")  # empty abstract
    copy_thesis(ids[4], folder, parts=("abstract",))
    latin = read_gz(VLSP / f"{ids[4]}.main.txt.gz").replace("the", "thé", 1).encode("latin-1", "replace")
    (folder / f"{ids[4]}.main.txt").write_bytes(latin)  # not UTF-8
    copy_thesis(ids[5], folder, parts=("abstract",))
    (folder / f"{ids[5]}.main.txt.gz").write_bytes(b"\x1f\x8b\x08 cut short")  # corrupt gzip
    copy_thesis(ids[6], folder, parts=("abstract",))
    short = read_gz(VLSP / f"{ids[6]}.main.txt.gz")[:3000]
    (folder / f"{ids[6]}.main.txt").write_text(short, encoding="utf-8")  # too short
    copy_thesis(ids[7], folder, parts=("main", "abstract"))
    (folder / f"{ids[7]}.abstract-long.txt").write_text("\n", encoding="utf-8")  # empty paper abstract
    (folder / "README.md").write_text("not a thesis\n", encoding="utf-8")
    out = tmp_path / "vlsp.jsonl"
    report = build_vlsp([folder], out).as_json()
    reasons = {entry["item"]: entry["reason"] for entry in report["dropped_items"]}
    assert reasons[ids[1]] == "main text missing"
    assert reasons[ids[2]] == "abstract missing"
    assert reasons[ids[3]] == "abstract empty"
    assert reasons[ids[4]].startswith("main text not UTF-8: byte 0x")
    assert reasons[ids[5]].startswith("main text unreadable: cannot decompress this .gz")
    tokens = LengthFilter().count(short)
    assert reasons[ids[6]] == f"too short: {tokens} gpt2 tokens < 10000"
    assert len(reasons) == 6
    kept = {entry["item"]: entry for entry in report["kept_items"]}
    assert sorted(kept) == [ids[0], ids[7]]
    assert kept[ids[7]]["references"] == 1
    assert kept[ids[7]]["notes"] == ["paper abstract not used: empty"]
    assert report["ignored_files"] == [str(folder / "README.md")]
    assert report["dropped_by_reason"]["too short"] == 1
    records = [r for _, r in read_records(out).records]
    assert [len(r.output) for r in records] == [2, 1]


def test_arxiv_abstract_only_and_a_higher_length_filter(tmp_path: Path) -> None:
    out = tmp_path / "vlsp.jsonl.bz2"
    report = build_vlsp([VLSP], out, length_filter=LengthFilter(min_tokens=60_000), long_abstract=False)
    records = [r for _, r in read_records(out).records]
    assert records and all(len(r.output) == 1 for r in records)
    assert all(r.metadata_json()["tokens"] >= 60_000 for r in records)
    assert report.as_json()["kept"] + report.as_json()["dropped"] == 20
    assert all(e["reason"].startswith("too short:") for e in report.dropped)


def test_duplicate_files_and_missing_sources_are_named(tmp_path: Path) -> None:
    paper = thesis_ids()[0]
    copy_thesis(paper, tmp_path / "a")
    copy_thesis(paper, tmp_path / "b", parts=("main",))
    report = build_vlsp([tmp_path / "a", tmp_path / "b"], tmp_path / "out.jsonl")
    assert report.dropped[0]["reason"].startswith(f"duplicate file: main of {paper} is already")
    with pytest.raises(BadInputError, match="no such file or folder"):
        build_vlsp([tmp_path / "nowhere"], tmp_path / "out.jsonl")


def test_nothing_kept_is_an_error_and_the_report_says_why(tmp_path: Path) -> None:
    paper = thesis_ids()[0]
    copy_thesis(paper, tmp_path / "in", parts=("main",))
    out = tmp_path / "vlsp.jsonl"
    with pytest.raises(BadInputError, match="no paper kept"):
        build_vlsp([tmp_path / "in"], out)
    assert not out.exists()
    assert (
        json.loads((tmp_path / "vlsp.report.json").read_text())["dropped_items"][0]["reason"]
        == "abstract missing"
    )
