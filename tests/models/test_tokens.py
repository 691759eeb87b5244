"""The lm-eval token boundary and the truncation bookkeeping, on the real SmolLM2 and GPT-2 tokenizers."""

from __future__ import annotations

import functools

import pytest

from longread.models import BadRequestError, ContextTooLongError, LoglikelihoodRequest
from longread.models.hf.backend import HFTokenEncoder
from longread.models.hf.loading import _gpt2_tokenizer, smollm2_tokenizer
from longread.models.tokens import encode_pair, encode_request, move_trailing_whitespace, rolling_windows


@functools.cache
def smol() -> HFTokenEncoder:
    return HFTokenEncoder(smollm2_tokenizer())


@functools.cache
def gpt2() -> HFTokenEncoder:
    return HFTokenEncoder(_gpt2_tokenizer())


def test_trailing_whitespace_moves_to_the_continuation() -> None:
    assert move_trailing_whitespace("It rained.  ", "Then") == ("It rained.", "  Then")
    assert move_trailing_whitespace("The end.\n\n", "CHAPTER II") == ("The end.", "\n\nCHAPTER II")
    assert move_trailing_whitespace("No space", " here") == ("No space", " here")


def test_smollm2_adds_no_bos_and_splits_a_paragraph_break_by_position() -> None:
    # SmolLM2's tokenizer adds no BOS by itself, so (as lm-eval's HFLM) neither do we.
    assert smol().encode("Hello world") == [19556, 905]
    # "\n\n" after text is one token (1116), at the start of a string it is two (198, 198):
    # this is why the continuation's tokens must come from tokenising context + continuation.
    assert smol().encode("The end.\n\n") == [504, 1112, 30, 1116]
    assert smol().encode("\n\nThe") == [198, 198, 504]


@pytest.mark.parametrize("encoder", [smol, gpt2], ids=["smollm2", "gpt2"])
def test_continuation_tokens_are_the_tail_of_the_whole(
    encoder: functools._lru_cache_wrapper[HFTokenEncoder],
) -> None:
    enc = encoder()
    context, continuation = "It is a truth universally acknowledged.\n\n", "CHAPTER II."
    context_ids, continuation_ids = encode_pair(enc, context, continuation)
    assert context_ids == enc.encode("It is a truth universally acknowledged.")
    whole = enc.encode("It is a truth universally acknowledged.\n\nCHAPTER II.")
    assert continuation_ids == whole[len(context_ids) :]
    assert enc.tokenizer.decode(continuation_ids) == "\n\nCHAPTER II."


def test_empty_context_becomes_the_prefix_token() -> None:
    enc = gpt2()
    context_ids, continuation_ids = encode_pair(enc, "", "Hello")
    assert context_ids == [enc.tokenizer.eos_token_id]  # GPT-2: BOS == EOS == <|endoftext|>
    assert continuation_ids == enc.encode_plain("Hello")


def test_truncation_keeps_the_end_of_the_context_and_the_start_of_each_continuation() -> None:
    enc = gpt2()
    context = " ".join(f"word{i}" for i in range(200))
    request = LoglikelihoodRequest(
        context, (" alpha beta gamma delta", " one"), max_context_tokens=50, max_continuation_tokens=2
    )
    group = encode_request(enc, request, max_length=1024)
    full_context = enc.encode(context)
    assert group.context_tokens_original == len(full_context) > 50
    assert group.context == tuple(full_context[-50:])
    full_first = encode_pair(enc, context, " alpha beta gamma delta")[1]
    assert group.continuation_tokens_original == (len(full_first), 1)
    assert group.continuations[0] == tuple(full_first[:2])
    assert group.continuations[1] == tuple(encode_pair(enc, context, " one")[1])


def test_the_window_cuts_more_context_when_truncation_is_on() -> None:
    enc = gpt2()
    context = " ".join(f"word{i}" for i in range(100))
    long_continuation = " and then" * 5  # 10 tokens
    request = LoglikelihoodRequest(context, (long_continuation, " x"))
    group = encode_request(enc, request, max_length=40)
    # The model sees context + longest continuation minus its last token: exactly the window.
    assert len(group.context) + len(group.continuations[0]) - 1 == 40
    assert group.context == tuple(enc.encode(context)[-len(group.context) :])
    assert group.context_tokens_original == len(enc.encode(context))


def test_no_truncation_means_a_clear_error() -> None:
    enc = gpt2()
    context = " ".join(f"word{i}" for i in range(100))
    request = LoglikelihoodRequest(context, (" and then",), truncate=False)
    with pytest.raises(ContextTooLongError, match=r"window is 40.*enable truncation"):
        encode_request(enc, request, max_length=40)
    fits = LoglikelihoodRequest(context, (" and then",), max_context_tokens=20, truncate=False)
    assert len(encode_request(enc, fits, max_length=40).context) == 20


def test_a_continuation_longer_than_the_window_is_refused_even_with_truncation() -> None:
    enc = gpt2()
    request = LoglikelihoodRequest("Hi", (" word" * 50,))
    with pytest.raises(ContextTooLongError, match="max_continuation_tokens"):
        encode_request(enc, request, max_length=20)


def test_request_validation() -> None:
    with pytest.raises(ValueError, match="at least one continuation"):
        LoglikelihoodRequest("a", ())
    with pytest.raises(ValueError, match="empty continuation"):
        LoglikelihoodRequest("a", ("b", ""))
    with pytest.raises(ValueError, match="max_context_tokens"):
        LoglikelihoodRequest("a", ("b",), max_context_tokens=0)
    request = LoglikelihoodRequest("a", ["b", "c"])  # type: ignore[arg-type]
    assert request.continuations == ("b", "c")


@pytest.mark.parametrize(("n_tokens", "max_length"), [(1, 8), (8, 8), (9, 8), (30, 8), (17, 5), (5, 1)])
def test_rolling_windows_are_lm_evals(n_tokens: int, max_length: int) -> None:
    import lm_eval.utils as lm_eval_utils  # installed by `make install` (the bench extra)

    tokens = list(range(100, 100 + n_tokens))
    theirs = [
        lm_eval_utils.make_disjoint_window(w)
        for w in lm_eval_utils.get_rolling_token_windows(tokens, 7, max_length, 1)
    ]
    ours = list(rolling_windows(tokens, 7, max_length))
    assert ours == theirs
    assert [t for _, continuation in ours for t in continuation] == tokens  # every token scored once


def test_a_continuation_swallowed_by_the_context_is_refused() -> None:
    enc = gpt2()
    assert len(enc.encode("Hel")) == len(enc.encode("Hello")) == 1  # "lo" merges into the context's token
    with pytest.raises(BadRequestError, match="no tokens of its own"):
        encode_request(enc, LoglikelihoodRequest("Hel", ("lo",)), max_length=1024)


def test_a_whitespace_only_context_becomes_the_prefix_token() -> None:
    enc = gpt2()
    group = encode_request(enc, LoglikelihoodRequest("  ", ("Hi",)), max_length=1024)
    assert group.context == (enc.prefix_token_id,)
    assert group.continuations == (tuple(enc.encode_plain("  Hi")),)
