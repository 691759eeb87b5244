from __future__ import annotations

import pytest

from longread.models.suffixlm.segments import Segmenter, pack, split_sentences


def test_sentences_join_back_and_split_at_sentence_starts() -> None:
    text = 'Mr. Smith said, "Hello there." Then he left!\n\nA new paragraph. And more.'
    pieces = split_sentences(text)
    assert "".join(pieces) == text
    assert pieces[0].startswith("Mr. Smith")
    assert any(p.strip() == "Then he left!" for p in pieces)
    assert any(p.strip().startswith("A new paragraph") for p in pieces)


def test_pack_keeps_whole_sentences_together() -> None:
    sentences = [[1] * 50, [2] * 50, [3] * 50, [4] * 20]
    segments = pack(sentences, 128)
    assert segments == [tuple([1] * 50 + [2] * 50), tuple([3] * 50 + [4] * 20)]


def test_long_sentence_overflows_and_its_tail_is_joined() -> None:
    sentences = [[1] * 10, [2] * 300, [3] * 5]
    segments = pack(sentences, 128)
    assert segments[0] == tuple([1] * 10)
    assert segments[1] == tuple([2] * 128)
    assert segments[2] == tuple([2] * 128)
    assert segments[3] == tuple([2] * 44 + [3] * 5)
    assert all(len(s) <= 128 for s in segments)


def test_pack_from_end_ends_full_at_the_break() -> None:
    sentences = [[1] * 100, [2] * 60, [3] * 60]
    backward = pack(sentences, 128, from_end=True)
    assert backward == [tuple([1] * 100), tuple([2] * 60 + [3] * 60)]
    assert [t for s in backward for t in s] == [t for s in sentences for t in s]


def test_size_must_be_positive() -> None:
    with pytest.raises(ValueError):
        pack([[1]], 0)


def _fake_tokenize(texts: list[str]) -> list[list[int]]:
    return [[len(w) for w in t.split()] for t in texts]


def test_context_cut_from_left_shares_trailing_segments() -> None:
    segmenter = Segmenter(_fake_tokenize, size=8)
    text = " ".join(f"Sentence number {i} has some words." for i in range(40))
    full, original, kept = segmenter.context_segments(text, None)
    assert original == kept == sum(len(s) for s in full)
    short, original_short, kept_short = segmenter.context_segments(text, 30)
    assert original_short == original and kept_short == 30
    assert sum(len(s) for s in short) == 30
    # Packed from the end: the last segments of a shorter cut are the longer cut's.
    assert short[1:] == full[-(len(short) - 1) :]


def test_first_segment_of_a_cut_candidate() -> None:
    segmenter = Segmenter(_fake_tokenize, size=8)
    text = "One two three. Four five six seven. Eight nine ten eleven twelve."
    segment, read, original = segmenter.first_segment(text, 5)
    assert original == 12 and read == 5 and len(segment) == 5
    segment, read, _ = segmenter.first_segment(text, None)
    assert read == 7  # two whole sentences fit; the third starts the next segment
