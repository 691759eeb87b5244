"""Log-probs of chosen tokens without every position's vocabulary logits at once.

A forward of a causal LM returns logits for every position fed: for the 6 × 128 candidate tokens of a
ChapterBreak instance under Gemma 3 (262,144-entry vocabulary) that is 0.8 GB of float32, twice over once
log-softmaxed — more than reading the 32K-token prefix takes. Here the decoder gives the hidden states,
and the output layer (with the model's final logit soft-capping, where its config has one) runs on a
slice of the vocabulary at a time for every position (``LOGIT_ELEMENTS`` logits at most), with a running
log-sum-exp; only each position's chosen-token log-prob and whether it was the argmax are kept. The
log-probs equal the full forward's to float rounding.

A model whose head does more than a linear layer and soft-capping (a logit scale, a multiplier) is read
through its full forward instead (:func:`slices_supported`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import torch
from transformers import PreTrainedModel

LOGIT_ELEMENTS = 4 << 20
"""Most vocabulary logits that exist at once (16 MB of float32): positions × a slice of the vocabulary."""
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
    """(float32 log-probs of the chosen tokens [k], were they the argmax [k]) for the positions of
    ``hidden``. The output layer runs on a slice of the vocabulary at a time (at most ``LOGIT_ELEMENTS``
    logits exist at once), so its weights are read once for all positions; the log-sum-exp runs over
    the slices (each max-shifted, as ``log_softmax`` is), the chosen logit and the argmax are kept."""
    head = model.get_output_embeddings()
    assert isinstance(head, torch.nn.Linear)
    cap = getattr(model.config, "final_logit_softcapping", None)
    n = len(targets)
    target = torch.tensor(list(targets), dtype=torch.long, device=hidden.device)
    rows = hidden[:n]
    width = max(1, LOGIT_ELEMENTS // max(1, n))
    vocab = head.weight.shape[0]
    picked = torch.zeros(n, dtype=torch.float32, device=hidden.device)
    best = torch.full((n,), -torch.inf, dtype=torch.float32, device=hidden.device)
    best_id = torch.zeros(n, dtype=torch.long, device=hidden.device)
    top = torch.full((n,), -torch.inf, dtype=torch.float32, device=hidden.device)
    total = torch.zeros(n, dtype=torch.float64, device=hidden.device)
    for first in range(0, vocab, width):
        bias = None if head.bias is None else head.bias[first : first + width]
        logits = torch.nn.functional.linear(rows, head.weight[first : first + width], bias).float()
        if cap:
            logits = logits.div_(cap).tanh_().mul_(cap)
        inside = (target >= first) & (target < first + logits.shape[1])
        if bool(inside.any()):
            where = inside.nonzero().squeeze(-1)
            picked[where] = logits[where, target[where] - first]
        slice_best, slice_id = logits.max(dim=-1)
        better = slice_best > best  # the first of equal values wins, as argmax
        best = torch.where(better, slice_best, best)
        best_id = torch.where(better, slice_id + first, best_id)
        shift = torch.maximum(top, slice_best)
        total = (
            total * torch.exp(top - shift).double() + logits.sub_(shift.unsqueeze(-1)).exp_().sum(-1).double()
        )
        top = shift
    yield picked - (top + total.log().float()), best_id == target


def chosen_scores(model: PreTrainedModel, hidden: torch.Tensor, targets: Sequence[int]) -> tuple[float, bool]:
    """Summed log-prob (float64) and greedy flag of ``targets`` after ``hidden`` [n, hidden], sliced."""
    total = torch.zeros((), dtype=torch.float64)
    greedy = True
    for logprobs, best in _logit_slices(model, hidden, targets):
        total += logprobs.double().sum().cpu()
        greedy = greedy and bool(best.all())
    return float(total), greedy


def chosen_logprobs(model: PreTrainedModel, hidden: torch.Tensor, targets: Sequence[int]) -> list[float]:
    """Each of ``targets``' log-prob after ``hidden`` [n, hidden] (its first ``len(targets)`` rows)."""
    values: list[float] = []
    for logprobs, _ in _logit_slices(model, hidden, targets):
        values += logprobs.double().tolist()
    return values
