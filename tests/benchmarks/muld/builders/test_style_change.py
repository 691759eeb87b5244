"""MuLD style-change builder on real Gutenberg books by different authors."""

from __future__ import annotations

import dataclasses
import json
import random
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from longread.benchmarks.muld.builders.report import BuildReport, LengthFilter
from longread.benchmarks.muld.builders.style_change import (
    SPLITS,
    build_style_change,
    parse_documents,
    split_paths,
    style_change_report_path,
)
from longread.benchmarks.muld.builders.style_change_compose import Supply, compose_many
from longread.benchmarks.muld.builders.style_change_works import paragraph_kind, plain_typography, read_works
from longread.benchmarks.muld.pan import record_truth
from longread.benchmarks.muld.records import MuldRecord, read_records
from longread.documents.book import Book
from longread.documents.jsonl_works import write_jsonl_works
from longread.documents.reader import read_book
from longread.errors import BadInputError
from longread.text.tokenizers import load_tokenizer
from tests.helpers import gutenberg_book, needs_shared

pytestmark = needs_shared

# Eight of the shortest novels, each by a different author, and one (pg157) whose chapters
# the Gutenberg reader cannot find: it must be reported, not used.
BOOKS = {
    215: "Jack London",
    35: "H. G. Wells",
    4517: "Edith Wharton",
    219: "Joseph Conrad",
    55: "L. Frank Baum",
    558: "John Buchan",
    209: "Henry James",
    2097: "Arthur Conan Doyle",
}
UNREADABLE = 157
SMALL = LengthFilter(min_tokens=2_000)
COUNTS = {"train": 8, "validation": 2, "test": 3}


def sources() -> list[Path]:
    return [gutenberg_book(n) for n in [*BOOKS, UNREADABLE]]


def build(out: Path, **options: object) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "length_filter": SMALL,
        "seed": 3,
        "documents": COUNTS,
        "test_fraction": 0.25,
        "validation_fraction": 0.15,
    }
    settings.update(options)
    return build_style_change(sources(), out, **settings).as_json()


def records_of(path: Path) -> list[MuldRecord]:
    read = read_records(path)
    assert not read.problems
    return [record for _, record in read.records]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("style") / "style_change.jsonl.bz2"
    return out, build(out)


def test_splits_are_written_with_the_asked_counts_and_the_unreadable_book_is_reported(
    built: tuple[Path, dict[str, Any]],
) -> None:
    out, report = built
    paths = split_paths(out)
    assert paths["train"].name == "style_change_train.jsonl.bz2"
    for split in SPLITS:
        assert len(records_of(paths[split])) == COUNTS[split]
    assert report["kept"] == sum(COUNTS.values())
    [dropped] = report["dropped_items"]
    assert dropped["item"].endswith(f"pg{UNREADABLE}.txt.gz")
    assert dropped["reason"].startswith("unreadable:")
    assert style_change_report_path(out).is_file()
    assert json.loads(style_change_report_path(out).read_text())["splits"]["test"]["documents"] == 3


def test_held_out_authors_are_only_in_test_and_splits_share_no_author(
    built: tuple[Path, dict[str, Any]],
) -> None:
    out, report = built
    paths = split_paths(out)
    authors = {
        split: {p["author"] for r in records_of(paths[split]) for p in r.metadata_json()["paragraphs"]}
        for split in SPLITS
    }
    held = report["settings"]["held_out"]
    assert held["rule"] == "seeded fraction 0.25 of the authors"
    assert set(held["test_authors"]) == authors["test"] and len(authors["test"]) == 2
    assert not authors["test"] & (authors["train"] | authors["validation"])
    assert not authors["train"] & authors["validation"]
    assert authors["train"] | authors["validation"] | authors["test"] <= set(BOOKS.values())


def test_every_truth_matches_its_paragraphs_and_every_paragraph_is_real_and_unique(
    built: tuple[Path, dict[str, Any]],
) -> None:
    out, _ = built
    books: dict[str, Book] = {}
    seen: set[tuple[str, int, int]] = set()
    texts: set[str] = set()
    length = LengthFilter(min_tokens=2_000)
    for split, path in split_paths(out).items():
        for line, record in enumerate(records_of(path), 1):
            paragraphs, truth = record_truth(record, path, line)
            meta = record.metadata_json()
            assert meta["split"] == split and meta["id"] == f"style-change-{split}-{line:05d}"
            sources = meta["paragraphs"]
            assert len(sources) == len(paragraphs)
            names = [s["author"] for s in sources]
            assert meta["authors"] == list(dict.fromkeys(names))
            assert truth.paragraph_authors == tuple(meta["authors"].index(n) + 1 for n in names)
            assert truth.authors == len(set(names)) and 1 <= truth.authors <= 4
            assert meta["tokens"] == length.count(record.input) >= 2_000
            for text, source in zip(paragraphs, sources, strict=True):
                key = (source["work"], source["chapter"], source["paragraph"])
                assert key not in seen and text not in texts  # never the same paragraph twice
                seen.add(key)
                texts.add(text)
                if source["work"] not in books:
                    books[source["work"]] = read_book(gutenberg_book(int(source["work"])))
                book = books[source["work"]]
                assert book.author == source["author"]
                block = re.split(r"\n[ \t]*\n", book.chapters[source["chapter"]].text)[source["paragraph"]]
                assert plain_typography(" ".join(block.split())) == text
                assert len(text.split()) >= 20


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_documents(
    built: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    out, _ = built
    first = {split: path.read_bytes() for split, path in split_paths(out).items()}
    report = style_change_report_path(out).read_bytes()
    build(out)
    assert {split: path.read_bytes() for split, path in split_paths(out).items()} == first
    assert style_change_report_path(out).read_bytes() == report
    other = tmp_path / "style_change.jsonl"
    build(other, seed=4)
    assert records_of(split_paths(other)["train"])[0].input != records_of(split_paths(out)["train"])[0].input


def test_named_test_authors_and_a_folder_out(tmp_path: Path) -> None:
    report = build(tmp_path, test_authors=["Jack London", "joseph conrad"], documents={"train": 2, "test": 2})
    held = report["settings"]["held_out"]
    assert held["test_authors"] == ["Jack London", "Joseph Conrad"]
    test = records_of(tmp_path / "style_change_test.jsonl.bz2")
    assert {p["author"] for r in test for p in r.metadata_json()["paragraphs"]} <= {
        "Jack London",
        "Joseph Conrad",
    }
    assert (tmp_path / "style_change.report.json").is_file()
    with pytest.raises(BadInputError, match="test author"):
        build(tmp_path / "x", test_authors=["Jane Austen"])


def test_at_the_real_10000_token_minimum(tmp_path: Path) -> None:
    report = build(
        tmp_path / "sc.jsonl",
        length_filter=LengthFilter(),
        documents={"train": 2, "validation": 0, "test": 1},
    )
    records = records_of(tmp_path / "sc_train.jsonl") + records_of(tmp_path / "sc_test.jsonl")
    assert len(records) == 3
    assert all(r.metadata_json()["tokens"] >= 10_000 for r in records)
    assert report["splits"]["validation"]["file"] is None


def test_running_out_of_paragraphs_is_reported(tmp_path: Path) -> None:
    report = build(tmp_path / "sc.jsonl", documents={"train": 1000, "validation": 0, "test": 0})
    made = report["splits"]["train"]["documents"]
    assert 0 < made < 1000
    reasons = [e["reason"] for e in report["dropped_items"] if e["item"] == "train documents"]
    assert reasons == [f"made {made} of 1000: no author has 2000 gpt2 tokens of unused paragraphs left"]


def test_single_author_documents_have_no_change(tmp_path: Path) -> None:
    tokenizer = load_tokenizer("gpt2")
    works = read_works(
        [gutenberg_book(215), gutenberg_book(35)], tokenizer, BuildReport("style-change", [], {})
    )
    supply = Supply.of(("all", w) for w in works)
    documents, stopped = compose_many(supply, random.Random(0), SMALL, 1, 5)
    assert stopped is None and len(documents) == 5
    for document in documents:
        truth = document.truth()
        assert truth.authors == 1 and not any(truth.changes)
    four, _ = compose_many(supply, random.Random(1), SMALL, 4, 20)
    assert Counter(len(d.authors()) for d in four).keys() <= {1, 2}  # only two authors in the pool


def test_the_test_relationship_of_ao3_works_is_held_out(tmp_path: Path) -> None:
    """AO3 works JSONL: real novel text, relationship tags as AO3 gives them; Draco/Harry goes to test."""
    tags = {
        215: "Draco Malfoy/Harry Potter",
        35: "Hermione Granger/Ron Weasley, Draco Malfoy/Harry Potter",
        4517: "Hermione Granger/Ron Weasley",
        219: "Hermione Granger/Ron Weasley",
        55: "Sirius Black/Remus Lupin",
        558: "Sirius Black/Remus Lupin",
    }
    books = []
    for number, relationship in tags.items():
        book = read_book(gutenberg_book(number))
        ao3_tags = {"fandom": "Harry Potter - J. K. Rowling", "relationship": relationship}
        books.append(dataclasses.replace(book, id=f"w{number}", metadata=ao3_tags))
    # A second work by a test author outside the test relationship: dropped, never in train.
    white_fang = read_book(gutenberg_book(910))
    books.append(
        dataclasses.replace(white_fang, id="w910", metadata={"relationship": "Sirius Black/Remus Lupin"})
    )
    works = tmp_path / "works.jsonl"
    write_jsonl_works(books, works)
    out = tmp_path / "sc.jsonl"
    report = build_style_change(
        [works], out, length_filter=SMALL, seed=1, documents={"train": 4, "validation": 0, "test": 3}
    ).as_json()
    held = report["settings"]["held_out"]
    assert held["test_authors"] == ["H. G. Wells", "Jack London"]
    assert report["dropped_items"][0]["item"].startswith("w910")
    assert report["dropped_items"][0]["reason"] == "author held out for test: work outside the test set"
    test = records_of(tmp_path / "sc_test.jsonl")
    assert {r.metadata_json()["pool"] for r in test} == {"Draco Malfoy/Harry Potter"}
    train = records_of(tmp_path / "sc_train.jsonl")
    assert {r.metadata_json()["pool"] for r in train} <= {
        "Hermione Granger/Ron Weasley",
        "Sirius Black/Remus Lupin",
    }
    train_works = {p["work"] for r in train for p in r.metadata_json()["paragraphs"]}
    assert train_works <= {"w4517", "w219", "w55", "w558"}
    # Documents never mix pools: each train document's works share its relationship.
    for record in train:
        meta = record.metadata_json()
        assert {report["works"][p["work"]]["pool"] for p in meta["paragraphs"]} == {meta["pool"]}


def test_paragraph_rules() -> None:
    assert paragraph_kind("CHAPTER IV. THE WHITE SILENCE", 20) == "heading"
    assert paragraph_kind("* * * * *", 20) == "heading"
    assert (
        paragraph_kind("[Illustration: The lion sprang at him, and the old man fell over the edge]", 5)
        == "note"
    )
    assert paragraph_kind("Yes, said he.", 20) == "short"
    assert paragraph_kind(" ".join(["word"] * 20), 20) is None


def test_typography_is_made_uniform_unless_kept(built: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """Half the Gutenberg novels use curly quotes: left alone, one character tells the authors apart."""
    assert (
        plain_typography("\u201cNo\u2014not _now_,\u201d she said\u2026 it\u2019s")
        == '"No--not now," she said... it\'s'
    )
    curly = ("\u201c", "\u201d", "\u2018", "\u2019", "\u2014")
    out, _ = built
    plain = [r.input for path in split_paths(out).values() for r in records_of(path)]
    assert not any(mark in text for text in plain for mark in curly)
    build(tmp_path, typography="keep")
    kept = [r.input for path in split_paths(tmp_path).values() if path.exists() for r in records_of(path)]
    assert any(mark in text for text in kept for mark in curly)


def test_documents_option() -> None:
    assert parse_documents("50") == {"train": 50, "validation": 50, "test": 50}
    assert parse_documents("all") == {"train": None, "validation": None, "test": None}
    assert parse_documents("train=100, test=20") == {"train": 100, "validation": None, "test": 20}
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        parse_documents("dev=3")
    with pytest.raises(ValueError, match="not a whole number"):
        parse_documents("train=many")


def test_a_folder_with_a_manifest_beside_the_books_gets_one_entry_for_it(tmp_path: Path) -> None:
    folder = tmp_path / "books"
    folder.mkdir()
    for number in (215, 35, 219):
        shutil.copy(gutenberg_book(number), folder)
    shutil.copy(gutenberg_book(215).parent / "manifest.jsonl", folder)
    report = build_style_change(
        [folder],
        tmp_path / "sc.jsonl",
        length_filter=SMALL,
        documents=1,
        test_fraction=0.3,
        validation_fraction=0,
    ).as_json()
    dropped, no_validation = report["dropped_items"]
    assert no_validation == {
        "item": "validation documents",
        "reason": "no work in this split (no author was assigned to it)",
    }
    assert dropped["item"] == str(folder / "manifest.jsonl")
    assert dropped["reason"].startswith("unreadable: no line is a work (99 lines; first: ")
    assert len(report["works"]) == 3
