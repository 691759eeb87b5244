"""Token chunks and the QA retrieval baseline, on a real Gutenberg novel (Pride and Prejudice)."""

from __future__ import annotations

import functools
import itertools

import pytest

from longread.benchmarks.muld.tasks.chunks import ABBREVIATIONS, Selection, token_chunks
from longread.benchmarks.muld.tasks.retrieval import retrieve, top_indices
from longread.files import read_text
from longread.text.tokenizers import NamedTokenizer, load_tokenizer
from tests.helpers import gutenberg_book, needs_shared

pytestmark = needs_shared

GALLERY_QUESTION = (
    "What did the housekeeper Mrs. Reynolds say about the miniatures of Wickham and Darcy "
    "in the gallery at Pemberley?"
)
GALLERY_PASSAGE = "“And that,” said Mrs. Reynolds, pointing to another of the miniatures,"


@functools.cache
def pride_and_prejudice() -> str:
    return read_text(gutenberg_book(1342))


@pytest.fixture(scope="module")
def gpt2() -> NamedTokenizer:
    return load_tokenizer("gpt2")


@pytest.mark.parametrize("size", [1, 7, 300])
def test_chunks_cover_the_book_without_gap_or_overlap(gpt2: NamedTokenizer, size: int) -> None:
    book = pride_and_prejudice()[: 40_000 if size < 300 else None]
    chunks = token_chunks(book, gpt2, size)
    assert chunks[0].start == 0 and chunks[-1].end == len(book)
    for before, after in itertools.pairwise(chunks):
        assert before.end == after.start
    assert "".join(chunk.text for chunk in chunks) == book
    assert [chunk.index for chunk in chunks] == list(range(len(chunks)))
    assert all(1 <= chunk.n_tokens <= size for chunk in chunks)
    assert sum(chunk.n_tokens for chunk in chunks) == gpt2.count(book)


def test_chunks_end_at_sentence_ends_near_the_limit(gpt2: NamedTokenizer) -> None:
    chunks = token_chunks(pride_and_prejudice(), gpt2, 300)
    full = chunks[:-1]
    # Every cut lies in the last quarter of the budget ...
    assert all(chunk.n_tokens >= 300 - 300 // 4 for chunk in full)
    # ... and in running prose it is a sentence end, never after "Mr." / "Mrs.".
    closed = [chunk.text.rstrip().rstrip("”’\"')]") for chunk in full]
    sentence_ends = [text for text in closed if text.endswith((".", "!", "?"))]
    assert len(sentence_ends) >= 0.95 * len(full)
    for chunk in full:
        last_word = chunk.text.rstrip().rsplit(None, 1)[-1].rstrip(".").lower()
        assert last_word not in ABBREVIATIONS, chunk.text[-60:]


def test_a_chunk_never_splits_a_word_when_a_space_is_in_reach(gpt2: NamedTokenizer) -> None:
    text = "Unconstitutionally " * 50
    chunks = token_chunks(text, gpt2, 10)
    assert all(chunk.text.rstrip(" ").endswith("Unconstitutionally") for chunk in chunks)


def test_chunks_of_empty_document_and_bad_size(gpt2: NamedTokenizer) -> None:
    assert token_chunks("", gpt2, 10) == []
    with pytest.raises(ValueError, match="at least 1 token"):
        token_chunks("text", gpt2, 0)


@pytest.mark.parametrize("method", ["tfidf", "bm25"])
def test_question_retrieves_the_chunk_holding_its_passage(gpt2: NamedTokenizer, method: str) -> None:
    book = pride_and_prejudice()
    passage = book.index(GALLERY_PASSAGE)
    selection = retrieve(book, GALLERY_QUESTION, method=method, chunk_tokens=300, top_k=3, tokenizer=gpt2)  # type: ignore[arg-type]
    assert selection.n_units > 600 and len(selection.kept) == 3
    assert any(span.start <= passage < span.end for span in selection.kept)
    starts = [span.start for span in selection.kept]
    assert starts == sorted(starts)  # document order
    assert all(span.score is not None and span.score > 0 for span in selection.kept)
    assert selection.settings["top_k"] == 3 and selection.tokenizer == "gpt2"
    assert selection.kept_tokens <= 3 * 300
    assert GALLERY_PASSAGE in selection.joined(book)
    # Deterministic, and the record survives a JSON round trip.
    again = retrieve(book, GALLERY_QUESTION, method=method, chunk_tokens=300, top_k=3, tokenizer=gpt2)  # type: ignore[arg-type]
    assert again == selection
    assert Selection.model_validate_json(selection.model_dump_json()) == selection


def test_the_two_scorers_differ_but_agree_on_the_passage(gpt2: NamedTokenizer) -> None:
    book = pride_and_prejudice()
    tfidf = retrieve(book, GALLERY_QUESTION, method="tfidf", chunk_tokens=300, top_k=1, tokenizer=gpt2)
    bm25 = retrieve(book, GALLERY_QUESTION, method="bm25", chunk_tokens=300, top_k=1, tokenizer=gpt2)
    assert tfidf.kept[0].index == bm25.kept[0].index
    assert tfidf.kept[0].score is not None and 0 < tfidf.kept[0].score <= 1  # a cosine
    assert bm25.kept[0].score is not None and bm25.kept[0].score > 1  # a BM25 sum


def test_ties_go_to_the_earlier_chunk_and_no_overlap_is_noted(gpt2: NamedTokenizer) -> None:
    import numpy as np

    assert top_indices(np.array([0.5, 0.9, 0.5, 0.5]), 2) == [0, 1]
    book = pride_and_prejudice()[:30_000]
    selection = retrieve(book, "zyzzyva qwxp", method="bm25", chunk_tokens=200, top_k=2, tokenizer=gpt2)
    assert [span.index for span in selection.kept] == [0, 1]
    assert selection.notes and "no chunk shares a term" in selection.notes[0]


def test_bad_arguments_are_named(gpt2: NamedTokenizer) -> None:
    with pytest.raises(ValueError, match="unknown retrieval method"):
        retrieve("some text", "q", method="dense", chunk_tokens=10, top_k=1, tokenizer=gpt2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="question is empty"):
        retrieve("some text", "  ", method="tfidf", chunk_tokens=10, top_k=1, tokenizer=gpt2)
    with pytest.raises(ValueError, match="document is empty"):
        retrieve("", "q", method="tfidf", chunk_tokens=10, top_k=1, tokenizer=gpt2)
