"""Every token's log-probability in a long text, with a long context and with a short one.

The *long* pass reads the text once, ``chunk`` tokens at a time, with the KV cache (as scoring reads a
prefix); each chunk's logits give its tokens' log-probs, and only the chosen token's log-softmax is kept.
A text longer than the window ``W`` is read in a sliding window: when the cache holds ``W`` tokens the
last ``W/2`` are read again into a fresh cache, so past position ``W`` every token sees between ``W/2``
and ``W`` tokens. The *short* pass scores the same tokens with ``K`` tokens of context: windows of ``K``
tokens advance by ``S`` and each token is scored in the window where it falls among the last ``S``
positions, seeing between ``K − S + 1`` and ``K`` tokens (``S = 1``: exactly ``K``). A model that reads a
start token (Gemma's ``<bos>``) gets it in front of every window; it is not counted as context.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers import DynamicCache, PreTrainedModel

from longread.models.hf.cache_argument import cache_keyword, with_cache
from longread.models.hf.sliced_logits import chosen_logprobs, last_hidden, slices_supported
from longread.models.requests import Progress


def _device(model: PreTrainedModel) -> torch.device:
    return next(model.parameters()).device


def _chosen_logprobs(logits: torch.Tensor, targets: Sequence[int]) -> list[float]:
    """log-softmax of ``logits`` [n, vocab] at ``targets`` (n), computed a slice of rows at a time."""
    out: list[float] = []
    target = torch.tensor(list(targets), dtype=torch.long, device=logits.device)
    for start in range(0, logits.shape[0], 256):
        rows = logits[start : start + 256].float()
        picked = rows.gather(-1, target[start : start + 256].unsqueeze(-1)).squeeze(-1)
        out += (picked - torch.logsumexp(rows, dim=-1)).double().tolist()
    return out


@torch.inference_mode()
def long_logprobs(
    model: PreTrainedModel,
    ids: Sequence[int],
    *,
    window: int,
    chunk: int = 512,
    start_token: int | None = None,
    progress: Progress | None = None,
) -> tuple[list[float | None], list[int]]:
    """``(logprobs, context)``: ``logprobs[p]`` = log p(ids[p] | what precedes it in the window), ``None``
    for ``p = 0`` without a start token (nothing predicts it); ``context[p]`` = the text tokens it saw."""
    if window < 2:
        raise ValueError(f"the window must hold at least 2 tokens, got {window}")
    device = _device(model)
    head = [] if start_token is None else [start_token]
    result: list[float | None] = [None] * len(ids)
    context = [0] * len(ids)
    cache = DynamicCache(config=model.config)
    sliced = slices_supported(model)  # vocabulary logits a slice at a time
    in_cache = 0  # text tokens in the cache
    fed_upto = 0  # ids[:fed_upto] have been read
    if head:
        logits = model(
            input_ids=torch.tensor([head], device=device), **with_cache(model, cache), use_cache=True
        ).logits
        if ids:
            result[0] = _chosen_logprobs(logits[0, -1:], [ids[0]])[0]
    while fed_upto < len(ids):
        if in_cache + 1 > window:  # slide: read the last W/2 tokens again into a fresh cache
            keep = window // 2
            cache = DynamicCache(config=model.config)
            again = head + list(ids[fed_upto - keep : fed_upto])
            for start in range(0, len(again), chunk):
                piece = torch.tensor([again[start : start + chunk]], device=device)
                model.base_model(input_ids=piece, **with_cache(model.base_model, cache), use_cache=True)
            in_cache = keep
        room = min(chunk, window - in_cache, len(ids) - fed_upto)
        piece_ids = list(ids[fed_upto : fed_upto + room])
        inputs = {"input_ids": torch.tensor([piece_ids], device=device), cache_keyword(model): cache}
        targets = list(ids[fed_upto + 1 : fed_upto + room + 1])
        values = (
            chosen_logprobs(model, last_hidden(model, **inputs, use_cache=True), targets)
            if sliced
            else _chosen_logprobs(model(**inputs, use_cache=True).logits[0][: len(targets)], targets)
        )
        for offset, value in enumerate(values):
            result[fed_upto + 1 + offset] = value
            context[fed_upto + 1 + offset] = in_cache + offset + 1
        fed_upto += room
        in_cache += room
        if progress is not None:
            progress(room)
    return result, context


@torch.inference_mode()
def short_logprobs(
    model: PreTrainedModel,
    ids: Sequence[int],
    *,
    short: int,
    stride: int,
    start_token: int | None = None,
    batch: int = 8,
    progress: Progress | None = None,
) -> list[float | None]:
    """``result[p]`` for ``p ≥ short``: log p(ids[p]) with between ``short − stride + 1`` and ``short``
    tokens of context; ``None`` before."""
    if not 1 <= stride <= short:
        raise ValueError(f"the stride must lie in 1…{short} (the short context), got {stride}")
    device = _device(model)
    head = [] if start_token is None else [start_token]
    result: list[float | None] = [None] * len(ids)
    sliced = slices_supported(model)  # vocabulary logits a slice at a time
    blocks = list(range(short, len(ids), stride))
    # Whole windows (all of length K) go through the model a batch at a time; a last, shorter block alone.
    for first_block in range(0, len(blocks), batch):
        group = blocks[first_block : first_block + batch]
        full = [b for b in group if b + stride <= len(ids)]
        rest = [b for b in group if b + stride > len(ids)]
        for chosen in (full, *([b] for b in rest)):
            if not chosen:
                continue
            ends = [b + min(stride, len(ids) - b) - 1 for b in chosen]  # one past each window's last token
            windows = [head + list(ids[end - short : end]) for end in ends]
            batch_ids = torch.tensor(windows, device=device)
            outputs = (
                model.base_model(input_ids=batch_ids).last_hidden_state
                if sliced
                else model(input_ids=batch_ids).logits
            )
            for row, b in enumerate(chosen):
                targets = list(ids[b : b + stride])
                first = len(head) + short - len(targets)  # the row that predicts ids[b]
                rows = outputs[row, first:]
                values = chosen_logprobs(model, rows, targets) if sliced else _chosen_logprobs(rows, targets)
                for offset, value in enumerate(values):
                    result[b + offset] = value
            if progress is not None:
                progress(sum(len(window) for window in windows))
    return result
