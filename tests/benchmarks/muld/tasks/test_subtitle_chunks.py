"""Line-preserving chunks for the translation baseline and the join of translated chunks.

The project has no OpenSubtitles copy; a Gutenberg novel's text is real line-based
text with the same shape (short "\\n"-separated lines, blank lines between blocks).
"""

from __future__ import annotations

import functools
import itertools

import pytest

from longread.benchmarks.muld.tasks.subtitle_chunks import (
    align_lines,
    chunk_selection,
    join_translations,
    line_chunks,
)
from longread.files import read_text
from longread.text.tokenizers import NamedTokenizer, load_tokenizer
from tests.helpers import gutenberg_book, needs_shared


@functools.cache
def novel_lines() -> str:
    text = read_text(gutenberg_book(1342))
    return text[text.index("Chapter 1\n") :][:60_000]


@pytest.fixture(scope="module")
def gpt2() -> NamedTokenizer:
    return load_tokenizer("gpt2")


@needs_shared
@pytest.mark.parametrize("max_tokens", [5, 64, 400])
def test_chunks_never_break_a_line_and_cover_the_text(gpt2: NamedTokenizer, max_tokens: int) -> None:
    document = novel_lines()
    chunks = line_chunks(document, gpt2, max_tokens)
    assert "".join(document[c.start : c.end] for c in chunks) == document
    assert [line for chunk in chunks for line in chunk.lines] == document.split("\n")
    for chunk in chunks:
        assert chunk.start == 0 or document[chunk.start - 1] == "\n"
        assert document[chunk.start : chunk.end].rstrip("\n") == chunk.text.rstrip("\n")
        assert chunk.n_tokens <= max_tokens or (chunk.over_long and len(chunk.lines) == 1)
    assert sum(chunk.n_tokens for chunk in chunks) == gpt2.count(document)
    # Greedy packing: a chunk closes only when the next line (its tokens in the whole-text
    # encoding) would not fit.
    starts = gpt2.encode(document).starts
    for chunk, after in itertools.pairwise(chunks):
        first_line_end = after.start + len(after.lines[0]) + 1
        next_line_tokens = int(((starts >= after.start) & (starts < first_line_end)).sum())
        assert chunk.over_long or after.over_long or chunk.n_tokens + next_line_tokens > max_tokens


@needs_shared
def test_an_over_long_line_is_its_own_chunk_and_is_recorded(gpt2: NamedTokenizer) -> None:
    paragraphs = novel_lines().split("\n\n")
    long_line = max(paragraphs, key=len).replace("\n", " ")
    document = "Short line one.\nShort line two.\n" + long_line + "\nShort line three."
    chunks, selection = chunk_selection(document, gpt2, 60)
    assert [c.over_long for c in chunks] == [False, True, False]
    assert chunks[1].text == long_line  # whole, never cut
    assert chunks[1].n_tokens > 60
    assert selection.kept[1].label == "lines 3-3 over-long"
    assert selection.notes == (f"line 3 has {chunks[1].n_tokens} tokens > 60: sent alone, not cut",)


def test_align_lines_rules() -> None:
    source = ["Hello.", "This is a much longer second line of the subtitle."]
    exact = align_lines("Hallo.\nDies ist eine viel längere zweite Zeile.", source)
    assert (exact.rule, exact.lines) == ("exact", ("Hallo.", "Dies ist eine viel längere zweite Zeile."))
    merged = align_lines("Hallo.\n\nDies ist eine viel längere\nzweite Zeile des Untertitels.\n", source)
    assert merged.rule == "merged" and merged.model_lines == 3
    assert merged.lines == ("Hallo.", "Dies ist eine viel längere zweite Zeile des Untertitels.")
    split = align_lines("Hallo. Dies ist eine viel längere zweite Zeile des Untertitels.", source)
    assert split.rule == "split"
    assert split.lines == ("Hallo.", "Dies ist eine viel längere zweite Zeile des Untertitels.")
    padded = align_lines("Hallo.", [*source, "Third."])
    assert (padded.rule, padded.lines) == ("padded", ("Hallo.", "", ""))
    empty = align_lines("  \n", source)
    assert (empty.rule, empty.lines) == ("empty", ("", ""))


def test_merging_keeps_every_group_non_empty() -> None:
    aligned = align_lines("a\nb\nc\nd very long final line indeed", ["x" * 40, "y", "z"])
    assert aligned.rule == "merged" and all(aligned.lines) and len(aligned.lines) == 3
    assert " ".join(aligned.lines) == "a b c d very long final line indeed"


@needs_shared
def test_join_restores_the_line_structure_and_records_mismatches(gpt2: NamedTokenizer) -> None:
    document = novel_lines()
    chunks = line_chunks(document, gpt2, 200)
    identity = join_translations(chunks, [chunk.text for chunk in chunks])
    assert identity.mismatches == ()
    assert identity.text.split("\n") == [
        line.strip() if line.strip() else line for line in document.split("\n")
    ]
    # A model that drops the last line of chunk 2 and adds a line to chunk 4.
    outputs = [chunk.text for chunk in chunks]
    outputs[2] = "\n".join(chunks[2].content_lines[:-1])
    outputs[4] = outputs[4] + "\nAn extra line the model invented."
    joined = join_translations(chunks, outputs)
    assert len(joined.text.split("\n")) == len(document.split("\n"))
    assert [(m.chunk, m.rule) for m in joined.mismatches] == [(2, "split"), (4, "merged")]
    assert joined.mismatches[0].expected == len(chunks[2].content_lines)
    with pytest.raises(ValueError, match="chunks but"):
        join_translations(chunks, outputs[:-1])
