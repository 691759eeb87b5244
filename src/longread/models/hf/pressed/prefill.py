"""The context read once under a press, as kvpress's own pipeline reads it.

kvpress compresses inside a forward hook on each attention layer, and only in the prefill that starts at
position 0 (``is_prefilling``: the last cache position + 1 equals the tokens fed). longread's usual chunked
prefill would therefore compress its first chunk only, so a pressed context is read in ONE forward, the
press's hooks on, and each hooked layer's cache holds exactly what the press kept. Everything read after
it (the question, the candidates, generated tokens) is read uncompressed on top, with true positions and a
mask per layer (:mod:`longread.models.hf.pressed.layer_masks`).

A span of the context that is part of the question (MuLD translation's preamble, "Translate these English
subtitles …", read before its document) is kept whole: the press compresses the rest of each pressed layer's
cache, at its ratio, as if the span were not there (:func:`protecting`).

Which layers are pressed is kvpress's rule: every attention layer, except the sliding-window layers of
Gemma 3 (kvpress skips them for its multimodal Gemma 3 class; the text-only class gets the same rule
here, since a sliding layer keeps only its window anyway).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from transformers import PreTrainedModel
from transformers.cache_utils import DynamicCache

from longread.models.hf.cache_argument import with_cache
from longread.models.hf.pressed.layer_masks import attention_modules, cached_length, layer_windows
from longread.models.press_spec import PressError, PressSpec


@dataclass(frozen=True, slots=True)
class KeptCache:
    """What a press left of one context: per layer, the entries kept, and which layers it pressed."""

    press: PressSpec
    read: int
    """Tokens read in the pressed forward (the protected span among them)."""
    per_layer: tuple[int, ...]
    """Each layer's cache entries after it (the protected span's among them)."""
    pressed_layers: tuple[int, ...]
    protected: int = 0
    """Tokens of that forward kept whole: a part of the question read before the document."""
    unpressed: int = 0
    """Tokens of the context read uncompressed after it (the question, or the context's last token)."""

    @property
    def pressed(self) -> int:
        """Tokens the press compressed."""
        return self.read - self.protected

    @property
    def mean_kept(self) -> float:
        """Entries kept of what was pressed, the mean over the pressed layers."""
        kept = [self.per_layer[i] - self.protected for i in self.pressed_layers]
        return sum(kept) / len(kept) if kept else float(self.pressed)

    def fields(self) -> dict[str, Any]:
        """The row's fields: the press, its ratio and the cache kept."""
        varies = len({self.per_layer[i] for i in self.pressed_layers}) > 1
        fields: dict[str, Any] = {
            "press": self.press.name,
            "compression_ratio": self.press.ratio,
            "context_tokens_pressed": self.pressed,
            "context_tokens_unpressed": self.unpressed + self.protected,
            "kept_cache_tokens": round(self.mean_kept, 3) if varies else int(self.mean_kept),
            "kept_cache_per_layer": list(self.per_layer),
            "pressed_layers": list(self.pressed_layers),
        }
        if self.protected:
            fields["question_tokens_kept_whole"] = self.protected
        return fields


def pressed_layers(model: PreTrainedModel) -> list[int]:
    """The layers a press compresses: all but sliding-window ones."""
    return [index for index, window in enumerate(layer_windows(model)) if window is None]


@contextmanager
def press_hooks(model: PreTrainedModel, press: Any) -> Iterator[None]:
    """kvpress's own hook (``press.forward_hook``) on every pressed layer, set up as its context manager
    does (``post_init_from_model``, the model's rotary embedding on each layer)."""
    press.post_init_from_model(model)
    modules = attention_modules(model)
    decoder: Any = model.base_model
    language_model = getattr(decoder, "language_model", decoder)
    hooks = []
    try:
        for index in pressed_layers(model):
            module = modules[index]
            module.rotary_emb = language_model.rotary_emb
            hooks.append(module.register_forward_hook(press.forward_hook, with_kwargs=True))
        yield
    finally:
        for hook in hooks:
            hook.remove()


@contextmanager
def protecting(press: Any, span: tuple[int, int]) -> Iterator[None]:
    """While open, ``press`` compresses each layer's cache without the positions ``span`` (start, end),
    which it keeps whole: the press scores the rest (the hidden states of every position still given, so a
    press that reads queries reads them all) and keeps its share of the rest; the span's entries are put in
    front (the cache's order is not read: every entry carries its position in its rotation)."""
    start, end = span
    if end <= start:
        yield
        return
    inner = press.compress

    def compress(
        module: Any, hidden_states: Any, keys: Any, values: Any, attentions: Any, kwargs: Any
    ) -> tuple[Any, Any]:
        def rest(tensor: Any) -> Any:
            return torch.cat([tensor[..., :start, :], tensor[..., end:, :]], dim=-2)

        seen = None if attentions is None else torch.cat([attentions[..., :start], attentions[..., end:]], -1)
        kept_keys, kept_values = inner(module, hidden_states, rest(keys), rest(values), seen, kwargs)
        whole_keys, whole_values = keys[..., start:end, :], values[..., start:end, :]
        return torch.cat([whole_keys, kept_keys], dim=-2), torch.cat([whole_values, kept_values], dim=-2)

    press.compress = compress
    try:
        yield
    finally:
        del press.compress


@torch.inference_mode()
def pressed_prefill(
    model: PreTrainedModel,
    ids: Sequence[int],
    press: Any,
    spec: PressSpec,
    protect: tuple[int, int] = (0, 0),
) -> tuple[DynamicCache, KeptCache]:
    """``ids`` read in one forward from position 0 under ``press``, the positions ``protect`` (start, end)
    kept whole: the compressed cache and what it kept."""
    if len(ids) <= protect[1] - protect[0]:
        raise PressError("a press needs at least one context token to compress")
    cache = DynamicCache(config=model.config)
    device = next(model.parameters()).device
    piece = torch.tensor([list(ids)], dtype=torch.long, device=device)
    try:
        with press_hooks(model, press), protecting(press, protect):
            model.base_model(input_ids=piece, **with_cache(model.base_model, cache), use_cache=True)
    except PressError:
        raise
    except Exception as exc:
        raise PressError(
            f"kvpress's {type(press).__name__} ({spec}) failed on {type(model).__name__}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    per_layer = tuple(cached_length(cache, index) for index in range(len(cache.layers)))
    protected = max(0, protect[1] - protect[0])
    return cache, KeptCache(spec, len(ids), per_layer, tuple(pressed_layers(model)), protected)
