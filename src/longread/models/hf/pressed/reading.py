"""Scoring and decoding on a pressed context: the question read uncompressed on top, then the candidates
packed into one row (each sees the kept context, the question and, causally, only itself), or tokens
generated one at a time; every forward with true positions and a mask per layer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase
from transformers.cache_utils import DynamicCache

from longread.models.hf.batch_generate import Decoded, Decoding, RowState
from longread.models.hf.cache_argument import cache_keyword, with_cache
from longread.models.hf.pressed.layer_masks import MaskPlan, masks_per_layer
from longread.models.hf.pressed.prefill import KeptCache, pressed_prefill
from longread.models.hf.shared_prefix import PrefixState, TokenScore, packed_scores, sub_batches
from longread.models.hf.sliced_logits import last_hidden, slices_supported
from longread.models.press_spec import PressSpec
from longread.models.requests import Progress


@dataclass(slots=True)
class PressedRead:
    """A context read under a press and whatever was read after it."""

    cache: DynamicCache
    read: int
    """Tokens read so far (true positions 0 … read - 1)."""
    kept: KeptCache


def _device(model: PreTrainedModel) -> torch.device:
    return next(model.parameters()).device


@torch.inference_mode()
def read_pressed(
    model: PreTrainedModel,
    pressed: Sequence[int],
    after: Sequence[int],
    press: Any,
    spec: PressSpec,
    progress: Progress | None = None,
    protect: tuple[int, int] = (0, 0),
) -> PressedRead:
    """``pressed`` read under the press (its positions ``protect`` kept whole), then ``after`` (the
    question) read uncompressed on top."""
    cache, kept = pressed_prefill(model, pressed, press, spec, protect)
    if progress is not None:
        progress(len(pressed))
    state = PressedRead(cache, len(pressed), kept)
    if after:
        extend(model, state, after)
        if progress is not None:
            progress(len(after))
    return state


@torch.inference_mode()
def extend(model: PreTrainedModel, state: PressedRead, ids: Sequence[int], *, logits: bool = False) -> Any:
    """Read ``ids`` on top of the cache (it grows); with ``logits``, the last position's vocabulary logits."""
    if not ids:
        if logits:
            raise ValueError("logits need at least one token to read")
        return None
    plan = MaskPlan.one_segment(state.read, len(ids))
    with masks_per_layer(model, plan) as placeholder:
        inputs = {
            "input_ids": torch.tensor([list(ids)], dtype=torch.long, device=_device(model)),
            "attention_mask": placeholder,
            "position_ids": torch.tensor([list(plan.positions)], dtype=torch.long, device=_device(model)),
            "use_cache": True,
        }
        if logits:
            out = model(**inputs, **with_cache(model, state.cache), logits_to_keep=1).logits[0, -1]
        else:
            model.base_model(**inputs, **with_cache(model.base_model, state.cache))
            out = None
    state.read += len(ids)
    return out


@torch.inference_mode()
def score_pressed(
    model: PreTrainedModel,
    state: PressedRead,
    last_token: int,
    continuations: Sequence[Sequence[int]],
    *,
    batch_size: int,
    token_budget: int,
    progress: Progress | None = None,
) -> list[TokenScore]:
    """Log P(continuation | what was read + ``last_token``) for each; the cache is never changed."""
    lengths = [len(c) for c in continuations]
    sliced = slices_supported(model)
    scores: list[TokenScore] = []
    for group in sub_batches(lengths, batch_size, token_budget):
        members = [continuations[i] for i in group]
        fed = [token for continuation in members for token in (last_token, *continuation[:-1])]
        plan = MaskPlan.packed(state.read, [len(c) for c in members])
        with masks_per_layer(model, plan) as placeholder:
            inputs = {
                "input_ids": torch.tensor([fed], dtype=torch.long, device=_device(model)),
                "attention_mask": placeholder,
                "position_ids": torch.tensor([list(plan.positions)], dtype=torch.long, device=_device(model)),
                cache_keyword(model): PrefixState(state.cache, state.read).read_only(),
                "use_cache": True,
            }
            outputs = last_hidden(model, **inputs) if sliced else model(**inputs).logits[0]
        scores += packed_scores(model, outputs, members, sliced)
        if progress is not None:
            progress(sum(len(c) for c in members))
    return scores


@torch.inference_mode()
def decode_pressed(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    state: PressedRead,
    decoding: Decoding,
    progress: Progress | None = None,
) -> Decoded:
    """Feed ``decoding.prompt[-1]`` on the pressed read, then one token per forward until eos, a stop
    string or ``max_tokens`` (the cache grows; what the press kept stays as it kept it)."""
    row = RowState(decoding, tokenizer, tokenizer.eos_token_id)
    next_id: int | None = decoding.prompt[-1]
    while next_id is not None:
        logits = extend(model, state, [next_id], logits=True)
        if progress is not None:
            progress(1)
        next_id = row.step(logits)
    return row.result()
