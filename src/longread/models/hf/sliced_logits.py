"""Log-probs of chosen tokens without every position's vocabulary logits at once.

A forward of a causal LM returns logits for every position fed: for the 6 × 128 candidate tokens of a
ChapterBreak instance under Gemma 3 (262,144-entry vocabulary) that is 0.8 GB of float32, twice over once
log-softmaxed — more than reading the 32K-token prefix takes. Here the decoder gives the hidden states,
and the output layer (with the model's final logit soft-capping, where its config has one) runs on
``LOGIT_ROWS`` positions at a time; only each position's chosen-token log-prob and whether it was the
argmax are kept. The log-probs equal the full forward's to float rounding.

A model whose head does more than a linear layer and soft-capping (a logit scale, a multiplier) is read
through its full forward instead (:func:`slices_supported`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import torch
from transformers import PreTrainedModel

LOGIT_ROWS = 32
"""Positions whose vocabulary logits exist at once."""
_UNSUPPORTED_CONFIG = ("logit_scale", "logits_scaling", "output_multiplier_scale")


def slices_supported(model: PreTrainedModel) -> bool:
    """Is the model's output exactly ``softcap(lm_head(decoder(x)))``, so slices may compute it?"""
    if model.get_output_embeddings() is None or getattr(model, "base_model", None) is model:
        return False
    return not any(getattr(model.config, name, None) not in (None, 1, 1.0) for name in _UNSUPPORTED_CONFIG)


def last_hidden(model: PreTrainedModel, **inputs: Any) -> torch.Tensor:
    """The decoder's last hidden states of the first row, [positions, hidden] (no vocabulary logits)."""
    hidden: torch.Tensor = model.base_model(**inputs).last_hidden_state[0]
    return hidden


def _logit_slices(
    model: PreTrainedModel, hidden: torch.Tensor, targets: Sequence[int]
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """(float32 log-softmax [k, vocab], chosen ids [k]), ``LOGIT_ROWS`` positions of ``hidden`` at a time."""
    head = model.get_output_embeddings()
    assert head is not None
    cap = getattr(model.config, "final_logit_softcapping", None)
    target = torch.tensor(list(targets), dtype=torch.long, device=hidden.device)
    for start in range(0, len(targets), LOGIT_ROWS):
        logits = head(hidden[start : start + LOGIT_ROWS])
        if cap:
            logits = torch.tanh(logits / cap) * cap
        yield torch.log_softmax(logits.float(), dim=-1), target[start : start + LOGIT_ROWS]


def chosen_scores(model: PreTrainedModel, hidden: torch.Tensor, targets: Sequence[int]) -> tuple[float, bool]:
    """Summed log-prob (float64) and greedy flag of ``targets`` after ``hidden`` [n, hidden], sliced."""
    total = torch.zeros((), dtype=torch.float64)
    greedy = True
    for logprobs, chosen in _logit_slices(model, hidden, targets):
        total += logprobs.gather(-1, chosen.unsqueeze(-1)).squeeze(-1).double().sum().cpu()
        greedy = greedy and bool((logprobs.argmax(dim=-1) == chosen).all())
    return float(total), greedy


def chosen_logprobs(model: PreTrainedModel, hidden: torch.Tensor, targets: Sequence[int]) -> list[float]:
    """Each of ``targets``' log-prob after ``hidden`` [n, hidden] (its first ``len(targets)`` rows)."""
    values: list[float] = []
    for logprobs, chosen in _logit_slices(model, hidden, targets):
        values += logprobs.gather(-1, chosen.unsqueeze(-1)).squeeze(-1).double().tolist()
    return values
