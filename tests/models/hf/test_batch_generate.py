"""Chat prompts and batched generation on the real SmolLM2: the template is applied, and batched output
equals one-at-a-time output token for token (greedy and seeded sampling alike)."""

from __future__ import annotations

import pytest
import torch

from longread.models import BadRequestError, GenerateRequest
from longread.models.hf.backend import HFBackend
from longread.models.hf.batch_generate import TIE_MARGIN
from longread.models.requests import ChatPrompt
from tests.models_fixtures import PRIDE_AND_PREJUDICE, book_text, tuned

needs_book = pytest.mark.skipif(not PRIDE_AND_PREJUDICE.is_file(), reason=f"{PRIDE_AND_PREJUDICE} is missing")


def _excerpt(anchor: str, chars: int) -> str:
    """``chars`` characters of Pride and Prejudice from ``anchor`` on, ended at a paragraph."""
    text = book_text()
    start = text.index(anchor)
    return text[start : text.find("\n\n", start + chars)].strip()


def _summarise(excerpt: str) -> ChatPrompt:
    return ChatPrompt((("user", f'Summarize the following book excerpt: "{excerpt}".'),))


def _smollm2(preferred_batch: int) -> HFBackend:
    backend = tuned("smollm2")
    torch.set_num_threads(1)  # after loading: load_backend sets its own default
    backend.preferred_batch = preferred_batch
    return backend


def test_chat_prompt_is_rendered_with_smollm2s_template_and_one_start_token() -> None:
    backend = _smollm2(1)
    decoding, _ = backend._prepare(
        GenerateRequest(ChatPrompt((("user", "Who is Mr. Darcy?"),), system="Answer briefly."), max_tokens=4)
    )
    text = backend.tokenizer.decode(list(decoding.prompt))
    assert text == (
        "<|im_start|>system\nAnswer briefly.<|im_end|>\n<|im_start|>user\nWho is Mr. Darcy?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    start = backend.tokenizer.convert_tokens_to_ids("<|im_start|>")
    assert decoding.prompt[0] == start and decoding.prompt[1] != start  # the template's BOS, never two
    assert decoding.prompt.count(start) == 3
    # Without a system message the template's own default one is used.
    default, _ = backend._prepare(GenerateRequest(ChatPrompt((("user", "Hi"),)), max_tokens=4))
    assert "You are a helpful AI assistant named SmolLM" in backend.tokenizer.decode(list(default.prompt))


def test_a_tokenizer_without_a_chat_template_is_a_clear_error() -> None:
    with pytest.raises(BadRequestError, match="no chat template"):
        tuned("random:gpt2").generate([GenerateRequest(ChatPrompt((("user", "Hi"),)), max_tokens=2)])


def test_chat_role_and_temperature_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown chat role"):
        ChatPrompt((("narrator", "Hi"),))
    with pytest.raises(ValueError, match="temperature"):
        GenerateRequest("Hi", temperature=-1.0)


@needs_book
def test_batched_generation_equals_one_at_a_time_on_real_scenes() -> None:
    requests = [
        GenerateRequest(_summarise(_excerpt("It is a truth universally acknowledged", 700)), max_tokens=20),
        GenerateRequest(_summarise(_excerpt("Mr. Bennet was among the earliest", 300)), max_tokens=12),
        GenerateRequest(
            _summarise(_excerpt("Within a short walk of Longbourn", 450)), max_tokens=20, stop=(".",)
        ),
        # Seeded sampling: the same text batched or not.
        GenerateRequest(
            _summarise(_excerpt("Mr. Bennet was among the earliest", 300)),
            max_tokens=12,
            temperature=0.9,
            seed=7,
        ),
    ]
    single = _smollm2(1).generate(requests)
    backend = _smollm2(4)
    backend.regenerated_near_ties = 0
    batched = backend.generate(requests)
    assert [r.text for r in batched] == [r.text for r in single]
    assert [(r.n_generated_tokens, r.stopped_by, r.n_prompt_tokens) for r in batched] == [
        (r.n_generated_tokens, r.stopped_by, r.n_prompt_tokens) for r in single
    ]
    assert single[1].n_generated_tokens <= 12 and single[2].stopped_by in ("stop", "eos", "max_tokens")
    assert single[2].stopped_by != "stop" or "." not in single[2].text
    assert single[3].text != single[1].text  # sampling is not greedy
    assert backend.regenerated_near_ties <= len(requests)
    assert TIE_MARGIN > 0


@needs_book
def test_seeded_sampling_repeats_and_the_seed_matters() -> None:
    prompt = _summarise(_excerpt("Mr. Bennet was among the earliest", 300))
    backend = _smollm2(1)
    first, again, other = backend.generate(
        [
            GenerateRequest(prompt, max_tokens=10, temperature=1.0, seed=1),
            GenerateRequest(prompt, max_tokens=10, temperature=1.0, seed=1),
            GenerateRequest(prompt, max_tokens=10, temperature=1.0, seed=2),
        ]
    )
    assert first.text == again.text
    assert first.text != other.text
