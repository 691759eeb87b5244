"""Chosen-token log-probs from hidden states, a slice of the vocabulary's logits at a time: the full
forward's numbers (soft-capping included), and the full forward kept for heads that do more."""

from __future__ import annotations

import pytest
import torch

from longread.models.hf.loading import load_random
from longread.models.hf.sliced_logits import (
    chosen_logprobs,
    chosen_scores,
    last_hidden,
    slices_supported,
)


def _full(
    model: torch.nn.Module, ids: torch.Tensor, targets: list[int], cap: float | None
) -> tuple[float, bool]:
    logits = model(input_ids=ids).logits[0].float()
    if cap:
        logits = torch.tanh(logits / cap) * cap
    logprobs = torch.log_softmax(logits, dim=-1)
    target = torch.tensor(targets)
    picked = logprobs.gather(-1, target.unsqueeze(-1)).squeeze(-1).double().sum()
    return float(picked), bool((logprobs.argmax(-1) == target).all())


def _each(model: torch.nn.Module, ids: torch.Tensor, targets: list[int], cap: float | None) -> list[float]:
    logits = model(input_ids=ids).logits[0].float()
    if cap:
        logits = torch.tanh(logits / cap) * cap
    picked = torch.log_softmax(logits, dim=-1).gather(-1, torch.tensor(targets).unsqueeze(-1)).squeeze(-1)
    return [float(value) for value in picked]


def test_slices_give_the_full_forwards_log_probs_with_and_without_soft_capping(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from longread.models.hf import sliced_logits

    model = load_random("gpt2").model
    generator = torch.Generator().manual_seed(0)
    n = 37
    vocab = model.config.vocab_size
    monkeypatch.setattr(sliced_logits, "LOGIT_ELEMENTS", n * (vocab // 3 + 7))  # 3 slices, a ragged last
    ids = torch.randint(0, model.config.vocab_size, (1, n), generator=generator)
    targets = torch.randint(0, model.config.vocab_size, (n,), generator=generator).tolist()
    assert slices_supported(model)
    with torch.inference_mode():
        for cap in (None, 3.0):
            model.config.final_logit_softcapping = cap
            sliced = chosen_scores(model, last_hidden(model, input_ids=ids), targets)
            full = _full(model, ids, targets, cap)
            assert abs(sliced[0] - full[0]) <= 1e-4 * n and sliced[1] == full[1]
            each = chosen_logprobs(model, last_hidden(model, input_ids=ids), targets)
            direct = _each(model, ids, targets, cap)
            assert len(each) == n and max(abs(a - b) for a, b in zip(each, direct, strict=True)) <= 1e-5
            assert abs(sum(each) - sliced[0]) <= 1e-9 * n  # the same float32 values, summed in float64
            greedy = model(input_ids=ids).logits[0].argmax(-1).tolist()
            if cap is None:
                assert chosen_scores(model, last_hidden(model, input_ids=ids), greedy)[1] is True
    model.config.final_logit_softcapping = None


def test_a_head_that_scales_its_logits_is_read_whole() -> None:
    model = load_random("gpt2").model
    model.config.logit_scale = 0.5
    assert not slices_supported(model)
