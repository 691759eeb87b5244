"""Shared-prefix scoring equals one full forward per continuation (the harness baseline), one by one."""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from longread.models import LoglikelihoodRequest, LoglikelihoodResult
from longread.models.hf.shared_prefix import prefill, score_group_naive, score_group_shared
from tests.models_fixtures import PRIDE_AND_PREJUDICE, book_text, tuned
from tests.tolerances import summed_logprob_tolerance

RANDOM_SPECS = ["random:llama", "random:gpt2"]

needs_book = pytest.mark.skipif(not PRIDE_AND_PREJUDICE.is_file(), reason=f"{PRIDE_AND_PREJUDICE} is missing")


def assert_same_scores(shared: LoglikelihoodResult, naive: LoglikelihoodResult) -> None:
    assert shared.context_tokens_kept == naive.context_tokens_kept
    assert shared.context_tokens_original == naive.context_tokens_original
    for a, b in zip(shared.scores, naive.scores, strict=True):
        assert a.n_tokens == b.n_tokens and a.n_tokens_original == b.n_tokens_original
        assert abs(a.logprob - b.logprob) <= summed_logprob_tolerance(a.n_tokens), (a, b)
        assert a.is_greedy == b.is_greedy


def chapter_break_request() -> LoglikelihoodRequest:
    """~800 tokens of Pride and Prejudice ending right before a chapter heading, 6 real continuations."""
    text = book_text()
    headings = [m.start() for m in re.finditer(r"^Chapter \d+|^CHAPTER [IVXLC]+", text, flags=re.MULTILINE)]
    boundary = headings[5]
    context = text[boundary - 3000 : boundary]  # ends with the blank lines before the heading
    assert context.endswith("\n\n")
    later = text[headings[8] : headings[8] + 3000]
    continuations = (
        text[boundary : boundary + 600],  # the true next chapter, heading included
        "\n\n" + later[:300],  # starts with a paragraph break (after the moved "\n\n", four newlines)
        "Mr. Darcy",
        "?",  # the shortest: "\n\n?" once the context's trailing "\n\n" has moved over
        later[300:2500],  # long: cut to 128 tokens below
        "It was a truth universally acknowledged.  ",  # trailing whitespace inside a continuation
    )
    return LoglikelihoodRequest(context, continuations, max_continuation_tokens=128)


@pytest.mark.slow
@needs_book
def test_smollm2_on_a_real_chapter_break() -> None:
    request = chapter_break_request()
    shared = tuned("smollm2", prefill_chunk=256, batch_size=8).loglikelihood([request])[0]
    naive = tuned("smollm2", mode="naive").loglikelihood([request])[0]
    assert 600 <= shared.context_tokens_kept == shared.context_tokens_original <= 900  # 3-4 chunks
    assert shared.scores[3].n_tokens <= 3
    assert shared.scores[4].n_tokens == 128 < shared.scores[4].n_tokens_original
    assert_same_scores(shared, naive)
    # A real model prefers the true chapter opening to the same span of a later chapter.
    per_token = [s.logprob / s.n_tokens for s in shared.scores]
    assert per_token[0] > -6.0


def random_requests() -> list[LoglikelihoodRequest]:
    text = book_text()[40_000:60_000]
    return [
        LoglikelihoodRequest(text[:900] + " ", (text[900:1300], "\n\nThe", "x", text[5000:5050])),
        # a context shorter than most chunks, and a one-token continuation
        LoglikelihoodRequest("It rained.", (" Then", " the sun came out and dried the fields")),
        # truncation of context and continuations
        LoglikelihoodRequest(
            text[2000:6000],
            (text[6000:7000], text[8000:8100], "."),
            max_context_tokens=150,
            max_continuation_tokens=40,
        ),
        # a context of one token after stripping
        LoglikelihoodRequest("Yes\n", ("\n\nNo", " maybe so")),
    ]


@needs_book
@pytest.mark.parametrize("spec", RANDOM_SPECS)
@pytest.mark.parametrize(("prefill_chunk", "batch_size"), [(1, 1), (7, 2), (64, 3), (4096, 8)])
def test_random_models_agree_across_chunks_and_batches(
    spec: str, prefill_chunk: int, batch_size: int
) -> None:
    requests = random_requests()
    naive = tuned(spec, mode="naive").loglikelihood(requests)
    shared = tuned(spec, prefill_chunk=prefill_chunk, batch_size=batch_size).loglikelihood(requests)
    for a, b in zip(shared, naive, strict=True):
        assert_same_scores(a, b)


@needs_book
def test_window_truncation_is_the_same_in_both_modes() -> None:
    text = book_text()[10_000:20_000]
    request = LoglikelihoodRequest(text[:3000], (text[3000:3300], " and"))
    shared = tuned("random:gpt2", max_length=96, prefill_chunk=16, batch_size=2).loglikelihood([request])[0]
    naive = tuned("random:gpt2", max_length=96, mode="naive").loglikelihood([request])[0]
    assert shared.context_tokens_kept + shared.scores[0].n_tokens - 1 == 96
    assert shared.context_tokens_original > shared.context_tokens_kept
    assert_same_scores(shared, naive)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    context=st.lists(st.integers(0, 49_000), min_size=1, max_size=60),
    continuations=st.lists(st.lists(st.integers(0, 49_000), min_size=1, max_size=30), min_size=1, max_size=6),
    prefill_chunk=st.integers(1, 70),
    batch_size=st.integers(1, 7),
    token_budget=st.integers(1, 64),
)
def test_any_token_ids_any_settings(
    context: list[int], continuations: list[list[int]], prefill_chunk: int, batch_size: int, token_budget: int
) -> None:
    """A continuation over the token budget takes the chunked path; all paths agree with the baseline."""
    model = tuned("random:llama").model
    naive = score_group_naive(model, context, continuations)
    shared = score_group_shared(
        model,
        context,
        continuations,
        prefill_chunk=prefill_chunk,
        batch_size=batch_size,
        token_budget=token_budget,
    )
    for a, b, continuation in zip(shared, naive, continuations, strict=True):
        assert abs(a.logprob - b.logprob) <= summed_logprob_tolerance(len(continuation))
        assert a.is_greedy == b.is_greedy


def test_no_vocabulary_logits_at_prefix_positions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The output layer sees only the continuation positions, never the prefix, and at most
    LOGIT_ELEMENTS of its logits exist at once (a slice of the vocabulary for every position)."""
    from longread.models.hf import sliced_logits

    budget = 2_000  # a few slices of the vocabulary per continuation
    monkeypatch.setattr(sliced_logits, "LOGIT_ELEMENTS", budget)
    model = tuned("random:llama").model
    head = model.get_output_embeddings()  # type: ignore[no-untyped-call]
    assert isinstance(head, torch.nn.Linear)
    storage = head.weight.untyped_storage().data_ptr()
    whole: list[int] = []
    handle = head.register_forward_hook(lambda _m, _i, out: whole.append(out.shape[:-1].numel()))
    linear = torch.nn.functional.linear
    slices: list[tuple[int, int]] = []

    def watched(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
        out = linear(x, weight, bias)
        if weight.untyped_storage().data_ptr() == storage:
            slices.append((x.shape[:-1].numel(), weight.shape[0]))
        return out

    monkeypatch.setattr(torch.nn.functional, "linear", watched)
    try:
        continuations = [[5] * 40, [6] * 3, [7]]
        score_group_shared(model, list(range(1000, 1500)), continuations, prefill_chunk=64, batch_size=8)
    finally:
        handle.remove()
    assert whole == []  # the head never ran whole: the 500 prefix tokens produced no logits
    vocab = head.weight.shape[0]
    for n in (40, 3, 1):  # each continuation's positions, every slice of the vocabulary once
        assert sum(width for rows, width in slices if rows == n) == vocab
    assert {rows for rows, _ in slices} == {40, 3, 1} and len(slices) > 3
    assert max(rows * width for rows, width in slices) <= budget


def test_progress_counts_tokens() -> None:
    counted: list[int] = []
    backend = tuned("random:gpt2", prefill_chunk=8)
    result = backend.loglikelihood(
        [LoglikelihoodRequest("One two three four five six seven", (" eight", " nine ten"))], counted.append
    )[0]
    assert sum(counted) == result.context_tokens_kept - 1 + sum(s.n_tokens for s in result.scores)


def test_sliding_window_models_fall_back_to_private_caches() -> None:
    """A packed mask would bypass a sliding window; such models score each continuation on a cache copy."""
    from transformers import MistralConfig, MistralForCausalLM

    config = MistralConfig(
        vocab_size=500,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        sliding_window=16,
        max_position_embeddings=512,
    )
    torch.manual_seed(0)
    model = MistralForCausalLM(config).eval()
    context = [(7 * i) % 500 for i in range(90)]
    continuations = [[1, 2, 3, 4, 5], [9], list(range(100, 140))]
    assert not prefill(model, context, 8).packable
    naive = score_group_naive(model, context, continuations)
    shared = score_group_shared(model, context, continuations, prefill_chunk=8, token_budget=16)
    for a, b, continuation in zip(shared, naive, continuations, strict=True):
        assert abs(a.logprob - b.logprob) <= summed_logprob_tolerance(len(continuation))
