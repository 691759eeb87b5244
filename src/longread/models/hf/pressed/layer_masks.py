"""Attention masks built per layer from that layer's own cache, for forwards on a compressed cache.

After a press, layers hold caches of different lengths: the pressed layers what the press kept, a
sliding-window layer (Gemma 3, never pressed) the last ``window - 1`` tokens, and neither equals the number
of tokens read. transformers builds one mask per layer type from the cache's first layer and from
``cache_position``, so on such a cache its masks would let tokens see their own future (measured on
Gemma 3: ~11 tokens, +160 nats). Here every attention module gets, just before it runs, a mask made from
its own cache length:

- a pressed (full-attention) layer: every kept entry is visible, then the new tokens causally within their
  segment (packed continuations never see each other);
- a sliding layer: its entries are the last ones read, at known positions, so the window applies to them
  and to the new tokens alike.

Positions (for RoPE) are the true ones, passed as ``position_ids`` by the caller.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from transformers import PreTrainedModel


@dataclass(frozen=True, slots=True)
class MaskPlan:
    """What the new tokens of one forward are: their true positions and which segment each belongs to."""

    positions: tuple[int, ...]
    """True position of each new token (the prefix's tokens are at 0 … ``read`` - 1)."""
    segments: tuple[int, ...]
    """Segment of each new token: a token sees the earlier tokens of its own segment only."""
    read: int
    """Tokens read before the new ones (the cache's true length)."""

    @classmethod
    def one_segment(cls, read: int, count: int) -> MaskPlan:
        return cls(tuple(range(read, read + count)), (0,) * count, read)

    @classmethod
    def packed(cls, read: int, lengths: Sequence[int]) -> MaskPlan:
        positions = tuple(read + i for n in lengths for i in range(n))
        segments = tuple(s for s, n in enumerate(lengths) for _ in range(n))
        return cls(positions, segments, read)


def layer_windows(model: PreTrainedModel) -> list[int | None]:
    """Each decoder layer's sliding window (None: full attention)."""
    config = model.config
    count = int(config.num_hidden_layers)
    types = getattr(config, "layer_types", None) or ["full_attention"] * count
    window = getattr(config, "sliding_window", None)
    return [int(window) if kind == "sliding_attention" and window else None for kind in types]


def layer_mask(
    plan: MaskPlan, cached: int, window: int | None, device: torch.device, dtype: torch.dtype | None
) -> torch.Tensor:
    """[1, 1, new, cached + new]: bool (sdpa), or additive in ``dtype`` (eager) when ``dtype`` is given."""
    query = torch.tensor(plan.positions, dtype=torch.long, device=device)
    segment = torch.tensor(plan.segments, dtype=torch.long, device=device)
    new = torch.ones((len(plan.positions), len(plan.positions)), dtype=torch.bool, device=device).tril()
    new &= segment[:, None] == segment[None, :]
    if window is None:
        old = torch.ones((len(plan.positions), cached), dtype=torch.bool, device=device)
    else:
        # a sliding layer's entries are the last ``cached`` tokens read
        key = torch.arange(plan.read - cached, plan.read, device=device)
        old = query[:, None] - key[None, :] < window
        new &= query[:, None] - query[None, :] < window
    allowed = torch.cat([old, new], dim=1)[None, None]
    if dtype is None:
        return allowed
    return torch.zeros(allowed.shape, dtype=dtype, device=device).masked_fill(
        ~allowed, torch.finfo(dtype).min
    )


def cached_length(cache: Any, index: int) -> int:
    """Entries layer ``index`` of ``cache`` holds."""
    layer = cache.layers[index]
    keys = getattr(layer, "keys", None)
    return 0 if keys is None or keys.numel() == 0 else int(keys.shape[-2])


def attention_modules(model: PreTrainedModel) -> list[torch.nn.Module]:
    decoder: Any = model.base_model
    language_model = getattr(decoder, "language_model", decoder)
    return [layer.self_attn for layer in language_model.layers]


@contextmanager
def masks_per_layer(model: PreTrainedModel, plan: MaskPlan) -> Iterator[torch.Tensor]:
    """While open, every attention module takes the mask its own cache calls for; yields the placeholder
    the model's forward receives (a 4D mask, so transformers builds none; each layer replaces it)."""
    implementation = model.config._attn_implementation
    if implementation not in ("sdpa", "eager"):
        raise ValueError(
            f"a pressed cache is read with the 'sdpa' or 'eager' attention, not {implementation!r}"
        )
    dtype = next(model.parameters()).dtype if implementation == "eager" else None
    windows = layer_windows(model)
    device = next(model.parameters()).device

    def replace(module: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        index = int(module.layer_idx)  # type: ignore[arg-type]
        cache = kwargs.get("past_key_values", kwargs.get("cache"))
        cached = 0 if cache is None else cached_length(cache, index)
        kwargs["attention_mask"] = layer_mask(plan, cached, windows[index], device, dtype)
        return args, kwargs

    hooks = [
        module.register_forward_pre_hook(replace, with_kwargs=True) for module in attention_modules(model)
    ]
    try:
        placeholder = torch.ones((1, 1, len(plan.positions), 1), dtype=torch.bool, device=device)
        yield placeholder if dtype is None else placeholder.to(dtype)
    finally:
        for hook in hooks:
            hook.remove()
