"""HotpotQA lengthening on questions in HotpotQA's JSON layout and a page pool of real book text.

``tests/data/muld/hotpotqa`` holds four questions in the published layout and
a small pool of hand-written pages (two of its lines broken on purpose). The
long distractor pages are made at test time from paragraphs of real Gutenberg
novels in ../shared, titled like the Wikipedia pages the sample pages link to.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from longread.benchmarks.muld.builders.hotpotqa import build_hotpotqa
from longread.benchmarks.muld.builders.report import LengthFilter
from longread.benchmarks.muld.records import MuldRecord, read_records
from longread.errors import BadInputError
from longread.files import read_text
from tests.helpers import TEST_DATA, gutenberg_book, needs_shared

SAMPLE = TEST_DATA / "muld" / "hotpotqa"
QUESTIONS = SAMPLE / "hotpot_dev_sample.json"
BRIDGE, COMPARISON, EMMA, NO_ANSWER = (
    "5a8b57f25542995d1e6f1371",
    "5ae2070a5542994d89d5b313",
    "5a7a06935542990198eaf050",
    "5ac3b5e25542995ef918c1f2",
)
# page title → (Gutenberg book, first paragraph): the pages the sample pages link to, and unlinked ones
BOOK_PAGES = {
    "Persuasion (novel)": (105, 20),
    "Fitzwilliam Darcy": (1342, 40),
    "Steventon, Hampshire": (158, 30),
    "Eloi": (35, 30),
    "Morlock": (35, 90),
    "The War of the Worlds": (36, 20),
    "Treasure Island": (120, 20),
    "Dracula": (345, 20),
    "Frankenstein": (84, 20),
}
PARAGRAPHS_PER_PAGE = 12
MIN_TOKENS = 7_500


def book_paragraphs(book: int, first: int, count: int) -> str:
    text = read_text(gutenberg_book(book))
    paragraphs = [" ".join(block.split()) for block in text.split("\n\n") if len(block) > 300]
    return "\n\n".join(paragraphs[first : first + count])


def write_page_pool(path: Path) -> Path:
    """The sample's hand-written pages plus the long pages made of Gutenberg paragraphs, at ``path``."""
    lines = [SAMPLE.joinpath("pages.jsonl").read_text()]
    for title, (book, first) in BOOK_PAGES.items():
        page = {"title": title, "text": book_paragraphs(book, first, PARAGRAPHS_PER_PAGE), "links": []}
        lines.append(json.dumps(page) + "\n")
    path.write_text("".join(lines))
    return path


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_page_pool(tmp_path_factory.mktemp("hotpot") / "pages.jsonl")


@pytest.fixture(scope="module")
def built(pool: Path) -> tuple[Path, dict[str, MuldRecord]]:
    out = pool.parent / "hotpotqa.jsonl"
    build_hotpotqa(QUESTIONS, pool, out, seed=7, length_filter=LengthFilter(min_tokens=MIN_TOKENS))
    records = {record.metadata_json()["id"]: record for _, record in read_records(out).records}
    return out, records


def pages_of(record: MuldRecord) -> list[dict[str, Any]]:
    return record.metadata_json()["pages"]  # type: ignore[no-any-return]


@needs_shared
def test_supporting_pages_in_full_then_linked_then_similar(
    pool: Path, built: tuple[Path, dict[str, MuldRecord]]
) -> None:
    _, records = built
    assert set(records) == {BRIDGE, COMPARISON}
    bridge = records[BRIDGE]
    assert bridge.output == ("1813",)
    document = bridge.input.split("\n\n", 1)[1]
    assert bridge.input.startswith(
        "In which year was the novel whose protagonist is Elizabeth Bennet published?\n\n"
    )
    pages = {json.loads(line)["title"]: json.loads(line) for line in pool.read_text().splitlines()[:5]}
    by_title = {page["title"]: page for page in pages_of(bridge)}
    for title in ("Elizabeth Bennet", "Pride and Prejudice"):
        span = by_title[title]
        assert span["supporting"] is True
        assert document[span["start"] : span["end"]] == f"{title}\n\n{pages[title]['text']}"
    # the links of the supporting pages (Elizabeth Bennet's, then Pride and Prejudice's) are not
    # enough (~3,300 tokens): all are taken, then pages similar to the question
    origins = {p["title"]: p["origin"] for p in pages_of(bridge)}
    assert {t for t, o in origins.items() if o == "linked"} == {
        "Fitzwilliam Darcy",
        "Jane Austen",
        "Persuasion (novel)",
    }
    assert list(origins.values()).count("similar") >= 1
    assert LengthFilter().count(bridge.input) >= MIN_TOKENS
    comparison = pages_of(records[COMPARISON])
    assert {p["title"] for p in comparison if p["origin"] == "linked"} == {
        "Jane Austen",
        "Elizabeth Bennet",
        "Persuasion (novel)",
        "H. G. Wells",
        "Eloi",
        "Morlock",
    }
    assert [p["origin"] for p in comparison].count("similar") >= 1


@needs_shared
def test_linked_pages_come_first_in_link_order(pool: Path, tmp_path: Path) -> None:
    out = tmp_path / "short.jsonl"
    build_hotpotqa(QUESTIONS, pool, out, length_filter=LengthFilter(min_tokens=1_500))
    bridge = next(r for _, r in read_records(out).records if r.metadata_json()["id"] == BRIDGE)
    # Elizabeth Bennet's first link (Pride and Prejudice) is already in; the next one suffices
    assert sorted((p["origin"], p["title"]) for p in pages_of(bridge)) == [
        ("linked", "Fitzwilliam Darcy"),
        ("supporting", "Elizabeth Bennet"),
        ("supporting", "Pride and Prejudice"),
    ]


@needs_shared
def test_evidence_sentences_are_located_in_the_input(built: tuple[Path, dict[str, MuldRecord]]) -> None:
    _, records = built
    record = records[BRIDGE]
    meta = record.metadata_json()
    offset = meta["document_offset"]
    assert record.input[:offset] == meta["question"] + "\n\n"
    for fact in meta["evidence"]:
        assert fact["start"] is not None
        assert record.input[offset + fact["start"] : offset + fact["end"]] == fact["sentence"]
    assert meta["evidence"][0]["sentence"].startswith("Elizabeth Bennet is the protagonist")


@needs_shared
def test_order_is_seeded_per_question_and_bytes_are_stable(
    pool: Path, built: tuple[Path, dict[str, MuldRecord]], tmp_path: Path
) -> None:
    out, records = built
    length = LengthFilter(min_tokens=MIN_TOKENS)
    again = tmp_path / "again.jsonl"
    build_hotpotqa(QUESTIONS, pool, again, seed=7, length_filter=length)
    assert again.read_bytes() == out.read_bytes()
    # one question alone gets the same pages in the same order
    alone = tmp_path / "alone.json"
    alone.write_text(json.dumps([q for q in json.loads(QUESTIONS.read_text()) if q["_id"] == COMPARISON]))
    single = tmp_path / "single.jsonl"
    build_hotpotqa(alone, pool, single, seed=7, length_filter=length)
    assert read_records(single).records[0][1] == records[COMPARISON]
    other_seed = tmp_path / "seed8.jsonl"
    build_hotpotqa(alone, pool, other_seed, seed=8, length_filter=length)
    reordered = pages_of(read_records(other_seed).records[0][1])
    assert [p["title"] for p in reordered] != [p["title"] for p in pages_of(records[COMPARISON])]
    assert sorted(p["title"] for p in reordered) == sorted(p["title"] for p in pages_of(records[COMPARISON]))


def test_default_filter_drops_short_questions_and_names_every_reason(tmp_path: Path) -> None:
    out = tmp_path / "hotpotqa.jsonl"
    report = build_hotpotqa(QUESTIONS, SAMPLE / "pages.jsonl", out)
    assert report.kept == []
    reasons = {entry["item"]: entry["reason"] for entry in report.dropped}
    assert reasons[BRIDGE].startswith("too short:") and reasons[BRIDGE].endswith("(page pool exhausted)")
    assert "< 10000" in reasons[BRIDGE]
    assert reasons[EMMA] == "supporting page missing: 'Emma (novel)' is not in the page pool"
    assert reasons[NO_ANSWER].startswith("no answer")
    assert reasons["pages.jsonl:6"] == "bad page: page 'Broken page' has no 'text' string"
    assert reasons["pages.jsonl:7"].startswith("bad page: title 'Elizabeth Bennet' repeated (line 2 kept)")
    assert out.read_bytes() == b""
    saved = json.loads(out.with_name("hotpotqa.report.json").read_text())
    assert saved["settings"]["tokenizer"] == "gpt2" and saved["dropped"] == 6


def test_broken_questions_file_is_an_error_with_its_line(tmp_path: Path) -> None:
    broken = tmp_path / "hotpot_broken.json"
    text = QUESTIONS.read_text()
    broken.write_text(text[: text.index('"type": "comparison"')])  # cut short mid-list
    with pytest.raises(BadInputError) as caught:
        build_hotpotqa(broken, SAMPLE / "pages.jsonl", tmp_path / "out.jsonl")
    assert "hotpot_broken.json, line" in str(caught.value)
    pages = tmp_path / "pages"
    pages.mkdir()
    shutil.copy(SAMPLE / "pages.jsonl", pages / "empty.jsonl")
    (pages / "empty.jsonl").write_text('{"title": "x"}\n')
    with pytest.raises(BadInputError, match="no usable page"):
        build_hotpotqa(QUESTIONS, pages / "empty.jsonl", tmp_path / "out.jsonl")
