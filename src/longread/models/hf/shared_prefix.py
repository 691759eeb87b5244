"""Score many continuations of one long context at the cost of reading the context once.

The context (minus its last token) is prefilled in chunks through the decoder
WITHOUT the output layer, so no vocabulary logits exist at prefix positions.
Each continuation is then fed as ``[last context token] + continuation[:-1]``
on top of the prefix keys/values: the logits at the last context position (the
one that scores the first continuation token) and at the continuation positions
are the only logits ever computed.

A batch of continuations is PACKED into one row rather than padded into many:
each continuation sees the whole prefix and, causally, only itself (a
block-diagonal 4D mask), and its position ids restart after the prefix. So the
prefix keys/values are never expanded to the batch (measured on SmolLM2 at 4K:
the padded batch spent a third of its time copying the expanded prefix for
grouped-query attention) and no padding is computed. The prefix keys/values
are read-only during scoring — never copied, never mutated — so sub-batches
reuse them and the memory stays near one forward over the prefix.

``score_group_naive`` is the baseline every harness uses: one full forward per
context + continuation. Both take the same token sequences.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from transformers import PreTrainedModel
from transformers.cache_utils import Cache, DynamicCache, DynamicLayer

from longread.models.hf.cache_argument import cache_keyword, with_cache
from longread.models.hf.sliced_logits import chosen_scores, last_hidden, slices_supported
from longread.models.requests import Progress

DEFAULT_TOKEN_BUDGET = 1024
"""Most continuation tokens in one packed forward (bounds its [tokens, vocab] logits)."""


@dataclass(frozen=True, slots=True)
class TokenScore:
    logprob: float
    is_greedy: bool


class _ReadOnlyPrefixLayer(DynamicLayer):
    """One layer's prefix keys/values, read by the packed continuations.

    ``update`` returns prefix + new states for attention but stores nothing, so
    the prefix survives every forward unchanged (no crop, no copy per
    sub-batch) and only one layer's concatenated keys exist at a time.
    """

    def __init__(self, keys: torch.Tensor, values: torch.Tensor) -> None:
        super().__init__()
        self.lazy_initialization(keys, values)
        self.keys = keys
        self.values = values

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        assert self.keys is not None and self.values is not None
        batch = key_states.shape[0]
        keys = torch.cat([self.keys.expand(batch, -1, -1, -1), key_states], dim=-2)
        values = torch.cat([self.values.expand(batch, -1, -1, -1), value_states], dim=-2)
        return keys, values


class PrefixState:
    """The prefilled cache of a context and how continuations read it."""

    def __init__(self, cache: DynamicCache, length: int) -> None:
        self.cache = cache
        self.length = length
        # Sliding-window and other special layers keep their own bookkeeping, which a packed
        # mask would bypass; such models score each continuation on a private copy instead.
        self.packable = all(type(layer) is DynamicLayer for layer in cache.layers)

    def read_only(self) -> Cache | None:
        if self.length == 0:
            return None
        layers: list[Any] = []
        for layer in self.cache.layers:
            assert isinstance(layer, DynamicLayer) and layer.keys is not None and layer.values is not None
            layers.append(_ReadOnlyPrefixLayer(layer.keys, layer.values))
        return Cache(layers=layers)

    def one_forward_copy(self) -> Cache:
        """A cache for a continuation fed in ONE forward: plain layers read the prefix in place (read-only:
        a long prefix is never copied), other layers (sliding windows) each get a private copy."""
        layers: list[Any] = []
        for layer in self.cache.layers:
            if type(layer) is DynamicLayer and layer.keys is not None and layer.values is not None:
                layers.append(_ReadOnlyPrefixLayer(layer.keys, layer.values))
            else:
                layers.append(copy.deepcopy(layer))
        return Cache(layers=layers)

    def growable_copy(self) -> DynamicCache:
        """A private cache that later forwards may extend (long continuations, special layers, generation)."""
        return copy.deepcopy(self.cache)


def _device(model: PreTrainedModel) -> torch.device:
    return next(model.parameters()).device


@torch.inference_mode()
def prefill(
    model: PreTrainedModel, ids: Sequence[int], chunk: int, progress: Progress | None = None
) -> PrefixState:
    """Run ``ids`` through the decoder without the output layer, ``chunk`` tokens at a time."""
    if chunk < 1:
        raise ValueError(f"prefill chunk must be at least 1, got {chunk}")
    cache = DynamicCache(config=model.config)
    decoder = model.base_model
    device = _device(model)
    for start in range(0, len(ids), chunk):
        piece = torch.tensor([list(ids[start : start + chunk])], dtype=torch.long, device=device)
        decoder(input_ids=piece, **with_cache(decoder, cache), use_cache=True)
        if progress is not None:
            progress(piece.shape[1])
    return PrefixState(cache, len(ids))


def _gather_scores(logits: torch.Tensor, targets: Sequence[int]) -> tuple[float, bool]:
    """Log-probability sum and greedy flag of ``targets`` under ``logits`` [n, vocab]."""
    target = torch.tensor(list(targets), dtype=torch.long, device=logits.device)
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    picked = logprobs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    greedy = bool((logprobs.argmax(dim=-1) == target).all())
    return float(picked.double().sum()), greedy


def _packed_mask(model: PreTrainedModel, prefix_length: int, lengths: Sequence[int]) -> torch.Tensor:
    """[1, 1, tokens, prefix + tokens]: each token sees the prefix and the earlier tokens of its segment."""
    total = sum(lengths)
    device = _device(model)
    allowed = torch.zeros((total, prefix_length + total), dtype=torch.bool, device=device)
    allowed[:, :prefix_length] = True
    start = 0
    for n in lengths:
        block = torch.ones((n, n), dtype=torch.bool, device=device).tril()
        allowed[start : start + n, prefix_length + start : prefix_length + start + n] = block
        start += n
    implementation = model.config._attn_implementation
    if implementation == "sdpa":
        return allowed[None, None]
    if implementation == "eager":  # an additive mask
        dtype = next(model.parameters()).dtype
        additive = torch.zeros(allowed.shape, dtype=dtype, device=device)
        return additive.masked_fill(~allowed, torch.finfo(dtype).min)[None, None]
    raise ValueError(
        f"shared-prefix scoring supports the 'sdpa' and 'eager' attention implementations, "
        f"not {implementation!r}; load the model with attn_implementation='sdpa'"
    )


def _score_packed(
    model: PreTrainedModel, prefix: PrefixState, last_token: int, continuations: Sequence[Sequence[int]]
) -> list[TokenScore]:
    """One forward for several continuations packed into one row on top of the shared prefix; the
    vocabulary logits made a slice at a time (:mod:`longread.models.hf.sliced_logits`)."""
    device = _device(model)
    fed = [token for continuation in continuations for token in (last_token, *continuation[:-1])]
    lengths = [len(c) for c in continuations]
    positions = [prefix.length + i for n in lengths for i in range(n)]
    inputs = {
        "input_ids": torch.tensor([fed], dtype=torch.long, device=device),
        "attention_mask": _packed_mask(model, prefix.length, lengths),
        "position_ids": torch.tensor([positions], dtype=torch.long, device=device),
        cache_keyword(model): prefix.read_only(),
        "use_cache": prefix.length > 0,
    }
    sliced = slices_supported(model)
    outputs = last_hidden(model, **inputs) if sliced else model(**inputs).logits[0]
    return packed_scores(model, outputs, continuations, sliced)


def packed_scores(
    model: PreTrainedModel, outputs: torch.Tensor, continuations: Sequence[Sequence[int]], sliced: bool
) -> list[TokenScore]:
    """Each continuation's score from one packed forward's ``outputs`` (hidden states where ``sliced``,
    else logits), the continuations' rows one after the other."""
    scores = []
    start = 0
    for continuation in continuations:
        rows = outputs[start : start + len(continuation)]
        logprob, greedy = (
            chosen_scores(model, rows, continuation) if sliced else _gather_scores(rows, continuation)
        )
        scores.append(TokenScore(logprob, greedy))
        start += len(continuation)
    return scores


def _score_long(
    model: PreTrainedModel, prefix: PrefixState, last_token: int, continuation: Sequence[int], chunk: int
) -> TokenScore:
    """A continuation too long for one forward (or a model with special layers): fed in chunks on a
    private copy of the prefix cache, the vocabulary logits made a slice at a time."""
    device = _device(model)
    fed = [last_token, *continuation[:-1]]
    # One forward reads the prefix in place; several need a cache that grows with each.
    cache = prefix.one_forward_copy() if len(fed) <= chunk and prefix.length > 0 else prefix.growable_copy()
    sliced = slices_supported(model)
    total = 0.0
    greedy = True
    for start in range(0, len(fed), chunk):
        inputs = {
            "input_ids": torch.tensor([fed[start : start + chunk]], dtype=torch.long, device=device),
            cache_keyword(model): cache,
            "use_cache": True,
        }
        targets = continuation[start : start + chunk]
        if sliced:
            logprob, piece_greedy = chosen_scores(model, last_hidden(model, **inputs), targets)
        else:
            logprob, piece_greedy = _gather_scores(model(**inputs).logits[0], targets)
        total += logprob
        greedy = greedy and piece_greedy
    return TokenScore(total, greedy)


def sub_batches(lengths: Sequence[int], batch_size: int, token_budget: int) -> list[list[int]]:
    """Consecutive groups of at most ``batch_size`` continuations and ``token_budget`` tokens."""
    groups: list[list[int]] = []
    used = 0
    for index, n in enumerate(lengths):
        if groups and len(groups[-1]) < batch_size and used + n <= token_budget:
            groups[-1].append(index)
            used += n
        else:
            groups.append([index])
            used = n
    return groups


@torch.inference_mode()
def score_group_shared(
    model: PreTrainedModel,
    context: Sequence[int],
    continuations: Sequence[Sequence[int]],
    *,
    prefill_chunk: int = 512,
    batch_size: int = 8,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    progress: Progress | None = None,
) -> list[TokenScore]:
    """Log P(continuation | context) for every continuation, reading the context once."""
    if not context:
        raise ValueError(
            "the context needs at least one token (lm-eval uses the prefix token for an empty one)"
        )
    if any(len(c) == 0 for c in continuations):
        raise ValueError("every continuation needs at least one token")
    prefix = prefill(model, context[:-1], prefill_chunk, progress)
    return score_on_prefix(
        model,
        prefix,
        context[-1],
        continuations,
        chunk=prefill_chunk,
        batch_size=batch_size,
        token_budget=token_budget,
        progress=progress,
    )


@torch.inference_mode()
def score_on_prefix(
    model: PreTrainedModel,
    prefix: PrefixState,
    last_token: int,
    continuations: Sequence[Sequence[int]],
    *,
    chunk: int = 512,
    batch_size: int = 8,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    progress: Progress | None = None,
) -> list[TokenScore]:
    """Log P(continuation | prefix + last_token) for every continuation on an already prefilled prefix.

    The prefix is never changed: packed continuations read it through
    read-only layers, long ones (or a model with special layers) get
    ``prefix.growable_copy()``.
    """
    if any(len(c) == 0 for c in continuations):
        raise ValueError("every continuation needs at least one token")
    lengths = [len(c) for c in continuations]
    scores: dict[int, TokenScore] = {}
    long_ones = [i for i, n in enumerate(lengths) if n > token_budget or not prefix.packable]
    for index in long_ones:
        scores[index] = _score_long(model, prefix, last_token, continuations[index], max(chunk, 1))
        if progress is not None:
            progress(lengths[index])
    short = [i for i in range(len(continuations)) if i not in scores]
    for group in sub_batches([lengths[i] for i in short], batch_size, token_budget):
        members = [short[g] for g in group]
        for index, score in zip(
            members,
            _score_packed(model, prefix, last_token, [continuations[i] for i in members]),
            strict=True,
        ):
            scores[index] = score
        if progress is not None:
            progress(sum(lengths[i] for i in members))
    return [scores[i] for i in range(len(continuations))]


@torch.inference_mode()
def score_group_naive(
    model: PreTrainedModel,
    context: Sequence[int],
    continuations: Sequence[Sequence[int]],
    *,
    progress: Progress | None = None,
) -> list[TokenScore]:
    """The harness baseline: one full forward (vocabulary logits at every position) per continuation."""
    if not context:
        raise ValueError(
            "the context needs at least one token (lm-eval uses the prefix token for an empty one)"
        )
    device = _device(model)
    scores = []
    for continuation in continuations:
        if not continuation:
            raise ValueError("every continuation needs at least one token")
        ids = torch.tensor([[*context, *continuation[:-1]]], dtype=torch.long, device=device)
        logits = model(input_ids=ids, use_cache=False).logits[0]
        logprob, greedy = _gather_scores(logits[len(context) - 1 :], continuation)
        scores.append(TokenScore(logprob, greedy))
        if progress is not None:
            progress(ids.shape[1])
    return scores
