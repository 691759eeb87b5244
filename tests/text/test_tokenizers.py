"""The build-time GPT-2 tokenizer: character spans of its tokens, and cutting a text to a token budget.

Both are checked against plain definitions on real book text and on strings made to be awkward
(multi-byte characters split between tokens, runs of spaces and newlines at the cut, long words).
"""

from __future__ import annotations

import gzip
import random

import pytest

from longread.text.tokenizers import NamedTokenizer, cut_before, load_tokenizer
from tests.helpers import gutenberg_book

AWKWARD = [
    "naïve café — “quoted” 日本語 😀👍🏽 and e\u0301 combining",
    "word   \n\n\n   word\t\tword " * 40,
    "Supercalifragilisticexpialidocious" * 60,
    "a 😀😀😀😀 b " * 80,
    "It was the best of times, it was the worst of times; " * 30,
    "---- **** ____ " * 100,
    "“Don't!” he said; 'tis so -- isn't it? ... (yes) [no] 's 'll 've " * 30,
    "x' 'x '' ' '  '\t'\n' ' \u00a0 \u2003 a" * 30,
]


@pytest.fixture(scope="module")
def gpt2() -> NamedTokenizer:
    return load_tokenizer("gpt2")


def _book_slices(count: int) -> list[str]:
    with gzip.open(gutenberg_book(1342), "rt", encoding="utf-8-sig") as fh:
        text = fh.read()
    rng = random.Random(5)
    starts = [rng.randrange(len(text) - 2_000) for _ in range(count)]
    return [text[start : start + rng.choice([40, 300, 1_500])] for start in starts]


def test_token_spans_are_the_characters_of_their_bytes(gpt2: NamedTokenizer) -> None:
    """Token i spans the characters that hold its first to its last UTF-8 byte."""
    for text in [*AWKWARD, *_book_slices(20), "", "x"]:
        encoding = gpt2.encode(text)
        byte_of_char = [len(text[:i].encode("utf-8")) for i in range(len(text) + 1)]
        char_of_byte = [i for i, char in enumerate(text) for _ in char.encode("utf-8")]
        position = 0
        for index, token in enumerate(encoding.ids):
            width = len(_token_bytes(gpt2, token))
            first, last = char_of_byte[position], char_of_byte[position + width - 1]
            assert (encoding.starts[index], encoding.ends[index]) == (first, last + 1), (text[:30], index)
            position += width
        assert position == byte_of_char[-1]


def _token_bytes(tokenizer: NamedTokenizer, token: int) -> bytes:
    return bytes(tokenizer._engine._encoding.decode_single_token_bytes(token))  # type: ignore[attr-defined]


@pytest.mark.parametrize("budget", [1, 3, 16, 64])
def test_head_is_the_longest_start_within_the_budget(gpt2: NamedTokenizer, budget: int) -> None:
    """For a text shorter than head's first window: the text up to token ``budget``'s start, with its
    own token count, whichever way head finds it (the quick path answers for most prose)."""
    quick = 0
    for text in [*AWKWARD, *_book_slices(60)]:
        encoding = gpt2.encode(text)
        if len(encoding.ids) <= budget:
            assert gpt2.head(text, budget) == (text, len(encoding.ids), False)
            continue
        kept = text[: cut_before(encoding, budget)]
        expected = (kept, gpt2.count(kept), True)
        if len(text) <= budget * 8 + 64:
            assert gpt2.head(text, budget) == expected, text[:40]
        answer = gpt2._quick_head(text, budget)
        if answer is not None:
            quick += 1
            assert answer == expected, text[:40]
    assert quick > 10
