"""The HF backend's whole contract: rolling log-likelihood, greedy generation, counting, describing."""

from __future__ import annotations

import pytest

from longread.models import (
    Backend,
    ContextTooLongError,
    GenerateRequest,
    LoglikelihoodRequest,
    RollingRequest,
)
from tests.models_fixtures import PRIDE_AND_PREJUDICE, book_text, tuned

needs_book = pytest.mark.skipif(not PRIDE_AND_PREJUDICE.is_file(), reason=f"{PRIDE_AND_PREJUDICE} is missing")


def test_hf_backend_keeps_the_protocol() -> None:
    backend = tuned("random:gpt2")
    assert isinstance(backend, Backend)
    facts = backend.describe()
    for key in ("spec", "weights", "dtype", "device", "mode", "max_length"):
        assert facts[key]
    assert facts["spec"] == "random:gpt2" and facts["mode"] == "shared"
    # How it computes is runtime (recorded per session, not hashed into a run's identity).
    runtime = backend.runtime_facts()
    assert set(runtime) == {
        "threads", "interop_threads", "device", "dtype", "attention", "prefill_chunk", "batch_size",
        "generate_batch_size",
    }  # fmt: skip
    # the device and dtype as the weights hold them, which the identity names as asked
    assert set(runtime) & set(facts) == {"device", "dtype"}
    assert (runtime["device"], runtime["dtype"]) == (facts["device"], facts["dtype"]) == ("cpu", "float32")
    assert runtime["attention"] in {"sdpa", "eager"}
    assert "torch" not in facts and "transformers" not in facts  # versions are the session's software


@needs_book
@pytest.mark.parametrize("spec", ["random:gpt2", "random:llama"])
def test_rolling_over_several_windows_agrees_in_both_modes(spec: str) -> None:
    text = book_text()[30_000:31_500]
    shared = tuned(spec, max_length=64, prefill_chunk=16).loglikelihood_rolling([RollingRequest(text)])[0]
    naive = tuned(spec, max_length=64, mode="naive").loglikelihood_rolling([RollingRequest(text)])[0]
    assert shared.n_tokens == naive.n_tokens == tuned(spec).count_tokens(text) > 3 * 64
    assert abs(shared.logprob - naive.logprob) <= 1e-3
    assert shared.logprob < 0


def test_rolling_within_one_window_is_loglikelihood_after_the_prefix_token() -> None:
    backend = tuned("random:gpt2")
    text = "It is a truth universally acknowledged, that a single man in possession of a good fortune."
    rolling = backend.loglikelihood_rolling([RollingRequest(text)])[0]
    scored = backend.loglikelihood([LoglikelihoodRequest("", (text,))])[0].scores[0]
    assert rolling.n_tokens == scored.n_tokens
    assert abs(rolling.logprob - scored.logprob) <= 1e-4
    assert backend.loglikelihood_rolling([RollingRequest("")])[0].n_tokens == 0


def test_generate_respects_max_tokens_and_stop_strings() -> None:
    backend = tuned("random:llama")
    free = backend.generate([GenerateRequest("Once upon a time", max_tokens=12)])[0]
    assert free.stopped_by in ("max_tokens", "eos")
    if free.stopped_by == "max_tokens":
        assert free.n_generated_tokens == 12
    assert free.n_prompt_tokens == backend.count_tokens("Once upon a time")
    assert free.text
    # Greedy is deterministic, so a stop string taken from the free run cuts the second run right there.
    stop = free.text[len(free.text) // 2 : len(free.text) // 2 + 3]
    cut = free.text.index(stop)
    stopped = backend.generate(
        [GenerateRequest("Once upon a time", stop=(stop, "\x00never"), max_tokens=12)]
    )[0]
    assert stopped.stopped_by == "stop"
    assert stopped.text == free.text[:cut]


def test_generate_refuses_a_budget_larger_than_the_window() -> None:
    with pytest.raises(ContextTooLongError, match="lower max_tokens"):
        tuned("random:gpt2").generate([GenerateRequest("Hi", max_tokens=2000)])


def test_generate_keeps_the_end_of_a_long_prompt() -> None:
    backend = tuned("random:gpt2", max_length=40)
    result = backend.generate([GenerateRequest(" word" * 100, max_tokens=8)])[0]
    assert result.n_prompt_tokens == 32


@pytest.mark.slow
def test_smollm2_greedy_text_is_greedy_under_loglikelihood() -> None:
    """generate and loglikelihood agree on the real model: the greedy continuation scores as greedy."""
    backend = tuned("smollm2")
    prompt = "One, two, three, four, five, six,"
    generated = backend.generate([GenerateRequest(prompt, stop=("\n",), max_tokens=6)])[0]
    assert generated.text.startswith(" seven")
    result = backend.loglikelihood([LoglikelihoodRequest(prompt, (generated.text, " banana"))])[0]
    assert result.scores[0].is_greedy
    assert not result.scores[1].is_greedy
    assert result.scores[0].logprob > result.scores[1].logprob
