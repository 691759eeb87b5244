"""A cut context keeps the model's start token: the rule on token ids, on SmolLM2 (no BOS), on Gemma 3 270M.

Gemma's tokenizer puts ``<bos>`` in front of every text and the model expects it;
cutting a context to its last N tokens must remove text, never that token. The
Gemma tests compare the backend with an independent scorer written here: a plain
transformers forward over ``[bos] + last N text tokens + continuation[:-1]``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import pytest
import torch

from longread.models import GenerateRequest, LoglikelihoodRequest, RollingRequest
from longread.models.hf.backend import HFBackend, HFTokenEncoder
from longread.models.hf.loading import smollm2_tokenizer
from longread.models.tokens import encode_request, keep_last_text_tokens, rolling_windows
from tests.models_fixtures import PRIDE_AND_PREJUDICE, backend, book_text, tuned
from tests.tolerances import summed_logprob_tolerance

BOS = 2
PREFIX_TOKENS = 256


class _ToyEncoder:
    """Words as token ids 10, 11, …; ``encode`` adds the BOS ``2`` like Gemma's tokenizer."""

    prefix_token_id = BOS
    start_token_id: int | None = BOS

    def encode(self, text: str) -> list[int]:
        return [BOS, *self.encode_plain(text)]

    def encode_plain(self, text: str) -> list[int]:
        return [10 + int(word[1:]) for word in text.split()]


def _words(first: int, last: int) -> str:
    return " ".join(f"w{i}" for i in range(first, last))


# ---------------------------------------------------------------- the rule on token ids


def test_the_left_cut_keeps_the_start_token_and_counts_text() -> None:
    assert keep_last_text_tokens([BOS, 1, 2, 3, 4], 2, BOS) == [BOS, 3, 4]
    assert keep_last_text_tokens([BOS, 1, 2], 5, BOS) == [BOS, 1, 2]
    assert keep_last_text_tokens([BOS, 1, 2], 0, BOS) == [BOS]
    assert keep_last_text_tokens([5, 1, 2, 3], 2, BOS) == [2, 3]  # no start token in front: plain cut
    assert keep_last_text_tokens([BOS, 1, 2, 3], 2, None) == [2, 3]  # a model without one


def test_max_context_tokens_and_the_window_cut_text_after_the_bos() -> None:
    encoder = _ToyEncoder()
    request = LoglikelihoodRequest(_words(0, 50), (" w50 w51 w52", " w60"), max_context_tokens=20)
    group = encode_request(encoder, request, max_length=1024)
    assert group.context == (BOS, *range(40, 60))
    assert (group.context_tokens_original, group.context_tokens_kept, group.context_start_tokens) == (
        50,
        20,
        1,
    )
    # The window: BOS + text + the longest continuation minus its last token fill it exactly.
    windowed = encode_request(encoder, LoglikelihoodRequest(_words(0, 50), (" w50 w51 w52",)), max_length=12)
    assert windowed.context == (BOS, *range(51, 60))
    assert len(windowed.context) + 3 - 1 == 12
    assert (windowed.context_tokens_original, windowed.context_tokens_kept) == (50, 9)
    # Room for the BOS alone is still a valid context.
    only_bos = encode_request(encoder, LoglikelihoodRequest(_words(0, 5), (" w5 w6 w7",)), max_length=3)
    assert only_bos.context == (BOS,) and only_bos.context_tokens_kept == 0


def test_an_empty_context_is_the_prefix_token_and_no_text() -> None:
    group = encode_request(_ToyEncoder(), LoglikelihoodRequest("  ", ("w1",), max_context_tokens=3), 1024)
    assert group.context == (BOS,)
    assert (group.context_tokens_original, group.context_tokens_kept) == (0, 0)


@pytest.mark.parametrize(("n_tokens", "max_length"), [(1, 4), (4, 4), (5, 4), (23, 4), (17, 2), (9, 5)])
def test_rolling_windows_start_with_the_bos_and_score_every_text_token_once(
    n_tokens: int, max_length: int
) -> None:
    tokens = list(range(100, 100 + n_tokens))
    windows = list(rolling_windows(tokens, BOS, max_length, start_token_id=BOS))
    assert [t for _, continuation in windows for t in continuation] == tokens
    for index, (context, continuation) in enumerate(windows):
        assert context[0] == BOS
        assert len(context) + len(continuation) - 1 <= max_length  # what the model reads fits
        if index > 0:  # the context is the text right before the predicted span
            start = tokens.index(continuation[0])
            assert context[1:] == tokens[start - len(context) + 1 : start]
    with pytest.raises(ValueError, match="no text"):
        list(rolling_windows(tokens, BOS, 1, start_token_id=BOS))


# ---------------------------------------------------------------- SmolLM2: no BOS, nothing changes


def test_smollm2_adds_no_bos_and_cuts_exactly_as_before() -> None:
    encoder = HFTokenEncoder(smollm2_tokenizer())
    assert encoder.start_token_id is None
    context = "It is a truth universally acknowledged, that a single man in possession of a good fortune"
    request = LoglikelihoodRequest(context * 20, (" must be in want of a wife.",), max_context_tokens=100)
    group = encode_request(encoder, request, max_length=8192)
    everything = encoder.encode(context * 20)
    assert group.context == tuple(everything[-100:])
    assert (group.context_tokens_original, group.context_tokens_kept) == (len(everything), 100)


def test_smollm2_describe_is_unchanged() -> None:
    facts = backend("smollm2").describe()
    assert "adds_bos" not in facts and "bos_kept" not in facts  # its run configs hash as before


# ---------------------------------------------------------------- Gemma 3 270M: the BOS stays


def _independent_logprob(model: torch.nn.Module, ids: Sequence[int], n_continuation: int) -> float:
    """Sum of log P(last ``n_continuation`` ids) under one plain forward over ``ids[:-1]``."""
    with torch.inference_mode():
        logits = (
            model(input_ids=torch.tensor([list(ids[:-1])]), logits_to_keep=n_continuation).logits[0].double()
        )
    logprobs = torch.log_softmax(logits, dim=-1)
    targets = torch.tensor(list(ids[-n_continuation:]))
    return float(logprobs[-n_continuation:].gather(-1, targets[:, None]).sum())


@functools.cache
def _chapter_break() -> tuple[str, tuple[str, str]]:
    """Pride and Prejudice up to the start of its Chapter 7, the true next chapter and a later one."""
    text = book_text()
    gold_at = text.index("\nChapter 7\n") + 1
    negative_at = text.index("\nChapter 20\n") + 1
    return text[:gold_at], (text[gold_at : gold_at + 400], text[negative_at : negative_at + 400])


needs_book = pytest.mark.skipif(not PRIDE_AND_PREJUDICE.is_file(), reason=f"{PRIDE_AND_PREJUDICE} is missing")


@pytest.fixture(scope="module")
def gemma() -> HFBackend:
    return backend("gemma3")


def test_gemma_adds_a_bos_and_says_so(gemma: HFBackend) -> None:
    assert gemma.encoder.start_token_id == gemma.tokenizer.bos_token_id == BOS
    assert gemma.encoder.encode("Hello world")[0] == BOS
    assert gemma.count_tokens("Hello world") == len(gemma.encoder.encode_plain("Hello world"))
    facts = gemma.describe()
    assert (facts["adds_bos"], facts["bos_kept"], facts["bos_token_id"]) == ("true", "true", str(BOS))
    assert facts["architecture"] == "Gemma3ForCausalLM"


@needs_book
def test_gemma_scores_a_cut_context_with_its_bos_in_front(gemma: HFBackend) -> None:
    """Shared-prefix scoring here; naive scoring equals it in the next test."""
    prefix, candidates = _chapter_break()
    request = LoglikelihoodRequest(
        prefix, candidates, max_context_tokens=PREFIX_TOKENS, max_continuation_tokens=48
    )
    result = gemma.loglikelihood([request])[0]
    tokenizer = gemma.tokenizer
    # The independent scorer: its own token ids (lm-eval's boundary), its own cut, one plain forward.
    context = prefix.rstrip()
    text_ids = tokenizer(context, add_special_tokens=False)["input_ids"]
    assert result.context_tokens_original == len(text_ids) > PREFIX_TOKENS
    assert result.context_tokens_kept == PREFIX_TOKENS
    kept = text_ids[-PREFIX_TOKENS:]
    for candidate, score in zip(candidates, result.scores, strict=True):
        whole = tokenizer(prefix + candidate, add_special_tokens=False)["input_ids"]
        continuation = whole[len(text_ids) :][:48]
        assert score.n_tokens == len(continuation) == 48
        with_bos = _independent_logprob(gemma.model, [BOS, *kept, *continuation], len(continuation))
        without_bos = _independent_logprob(gemma.model, [*kept, *continuation], len(continuation))
        assert score.logprob == pytest.approx(with_bos, abs=summed_logprob_tolerance(score.n_tokens))
        # The start token matters to Gemma: without it the same text is far less likely.
        assert with_bos - without_bos > 0.1 * len(continuation)
        print(f"{score.logprob:.2f} with <bos>, {without_bos:.2f} without ({len(continuation)} tokens)")


@needs_book
def test_gemma_shared_equals_naive_past_its_sliding_window(gemma: HFBackend) -> None:
    """A context longer than Gemma's 512-token sliding window, prefilled in chunks, scores as one forward."""
    prefix, candidates = _chapter_break()
    request = LoglikelihoodRequest(prefix, candidates, max_context_tokens=700, max_continuation_tokens=16)
    shared = tuned("gemma3", prefill_chunk=256).loglikelihood([request])[0]
    naive = tuned("gemma3", mode="naive").loglikelihood([request])[0]
    assert shared.context_tokens_kept == naive.context_tokens_kept == 700
    for a, b in zip(shared.scores, naive.scores, strict=True):
        assert a.logprob == pytest.approx(b.logprob, abs=summed_logprob_tolerance(a.n_tokens))


@needs_book
def test_gemma_rolling_windows_each_start_with_the_bos(gemma: HFBackend) -> None:
    text = book_text()[30_000:30_800]
    small = tuned("gemma3", max_length=48)
    rolling = small.loglikelihood_rolling([RollingRequest(text)])[0]
    text_ids = gemma.encoder.encode_plain(text)
    assert rolling.n_tokens == len(text_ids) == small.count_tokens(text) > 3 * 48
    expected = 0.0
    for context, continuation in rolling_windows(text_ids, BOS, 48, start_token_id=BOS):
        assert context[0] == BOS
        expected += _independent_logprob(gemma.model, [*context, *continuation], len(continuation))
    assert rolling.logprob == pytest.approx(expected, abs=summed_logprob_tolerance(rolling.n_tokens))


def test_gemma_generation_keeps_the_bos_in_front_of_a_cut_prompt(gemma: HFBackend) -> None:
    prompt = " ".join(["The sea was calm and the ship sailed on."] * 12)
    small = tuned("gemma3", max_length=40)
    result = small.generate([GenerateRequest(prompt, max_tokens=4)])[0]
    room = 40 - 4
    assert result.n_prompt_tokens == room  # BOS + 35 text tokens: what the model read
    ids = [BOS, *gemma.encoder.encode_plain(prompt)[-(room - 1) :]]
    with torch.inference_mode():
        for _ in range(result.n_generated_tokens):
            ids.append(
                int(gemma.model(input_ids=torch.tensor([ids]), logits_to_keep=1).logits[0, -1].argmax())
            )
    assert result.text == gemma.tokenizer.decode(ids[room:], skip_special_tokens=True)
