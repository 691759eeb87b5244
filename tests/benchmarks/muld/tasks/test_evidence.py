"""Where the answer evidence lies: metadata spans (HotpotQA builder's layout), verbatim answers and
token-F1 windows, on a real novel (Pride and Prejudice)."""

from __future__ import annotations

import functools
import re

import pytest

from longread.benchmarks.muld.tasks.evidence import F1_THRESHOLD, locate_evidence
from longread.files import read_text
from tests.helpers import gutenberg_book, needs_shared

pytestmark = needs_shared

GALLERY = "“And that,” said Mrs. Reynolds, pointing to another of the miniatures,"


@functools.cache
def pride_and_prejudice() -> str:
    return read_text(gutenberg_book(1342))


def pages_document() -> tuple[str, dict[str, object]]:
    """Three chapters as "pages", written as the HotpotQA builder writes its metadata."""
    book = pride_and_prejudice()
    blocks = [book[book.index(f"Chapter {n}\n") :][:3000] for n in (3, 20, 43)]
    document = "\n\n".join(blocks)
    pages, position = [], 0
    for n, block in enumerate(blocks):
        pages.append(
            {
                "title": f"Chapter {n}",
                "start": position,
                "end": position + len(block),
                "supporting": n != 1,
                "origin": "supporting" if n != 1 else "similar",
            }
        )
        position += len(block) + 2
    start = blocks[0].index("In a few days Mr. Bingley returned")
    sentence = blocks[0][start : blocks[0].index("library.", start) + 8]
    evidence = [
        {
            "title": "Chapter 0",
            "sentence_index": 3,
            "sentence": sentence,
            "start": start,
            "end": start + len(sentence),
        }
    ]
    return document, {"pages": pages, "evidence": evidence}


def test_supporting_fact_spans_come_first() -> None:
    document, metadata = pages_document()
    found = locate_evidence(document, ["Bingley"], metadata)
    (span,) = found.spans
    assert found.rule == "supporting-facts"
    assert found.position == pytest.approx((span[0] + span[1]) / 2 / len(document))
    assert document[span[0] : span[1]].endswith("in his library.")


def test_supporting_pages_when_facts_have_no_span_and_the_last_one_counts() -> None:
    document, metadata = pages_document()
    metadata["evidence"] = [{"title": "Chapter 0", "sentence": "not verbatim", "start": None, "end": None}]
    found = locate_evidence(document, ["Bingley"], metadata)
    assert found.rule == "supporting-pages"
    pages = metadata["pages"]
    assert isinstance(pages, list)
    assert found.spans == ((pages[0]["start"], pages[0]["end"]), (pages[2]["start"], pages[2]["end"]))
    assert found.position == pytest.approx((pages[2]["start"] + pages[2]["end"]) / 2 / len(document))


def test_spans_outside_the_document_are_ignored_and_said() -> None:
    document, metadata = pages_document()
    metadata["evidence"] = [{"start": len(document) + 5, "end": len(document) + 50}]
    metadata["pages"] = []
    found = locate_evidence(document, ["zebra quantum spaceship"], metadata)
    assert found.position is None
    assert (
        found.rule.startswith("not located: best token F1 0.00")
        and "outside the document ignored" in found.rule
    )


def test_verbatim_answer_first_occurrence_after_normalisation() -> None:
    book = pride_and_prejudice()
    found = locate_evidence(book, ["the Reynolds housekeeper", "Mrs Reynolds"], None)
    assert found.rule == "answer-exact" and found.reference == "Mrs Reynolds"
    first = re.search(r"Mrs\.\s+Reynolds", book)
    assert first is not None
    assert found.spans == ((first.start(), first.end()),)
    assert 0 < found.position < 1  # type: ignore[operator]


def test_the_longer_of_two_verbatim_references_wins() -> None:
    book = pride_and_prejudice()
    found = locate_evidence(book, ["Darcy", "the respectable-looking elderly woman"], None)
    assert found.reference == "the respectable-looking elderly woman"
    assert book[found.spans[0][0] : found.spans[0][1]] == "respectable-looking elderly woman"


def test_a_paraphrased_answer_is_found_by_token_f1() -> None:
    book = pride_and_prejudice()
    answer = "Reynolds, pointing at another miniatures, said it is my master"
    found = locate_evidence(book, [answer], None)
    assert found.rule == "answer-f1" and found.f1 is not None and found.f1 >= F1_THRESHOLD
    passage = book.index(GALLERY)
    (span,) = found.spans
    assert span[0] <= passage + len(GALLERY) and passage <= span[1]


@pytest.mark.parametrize(
    ("references", "reason"),
    [
        (["zebra quantum spaceship"], "not located: best token F1 0.00 < 0.5"),
        (["yes"], "not located: the answers are yes/no or stop words only"),
        (["it was the"], "not located: the answers are yes/no or stop words only"),
        ([], "not located: no reference answer"),
    ],
)
def test_not_located_says_why(references: list[str], reason: str) -> None:
    found = locate_evidence(pride_and_prejudice()[:50_000], references, {"id": "x", "question": "q"})
    assert found.position is None and found.rule == reason


def test_empty_document() -> None:
    assert locate_evidence("", ["a"], None).rule == "not located: empty document"
