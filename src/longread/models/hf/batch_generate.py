"""Generation for a local causal LM: one prompt at a time, or several decoded together in one batch.

One at a time (:func:`generate_one`): the prompt minus its last token is
prefilled in chunks, then tokens are fed one by one on the cache — the
reference every batched output is held to.

Batched (:func:`generate_batch`): each prompt is prefilled alone, exactly as
above, and the caches are stacked LEFT-padded to a common length (padding
prompts for a batched prefill computed up to half again as many tokens and
made prompt-heavy batches no faster); only the decoding steps run batched. The
attention mask hides the pads and the position ids count only a row's real
tokens, so every row attends to exactly what it would attend to alone. A row
leaves the batch (its cache rows are dropped) as soon as it stops, by the
end-of-text token, a stop string or its own ``max_tokens``.

What is guaranteed. Padding and batch shape change the order of float sums,
so a batched row's logits differ from the one-at-a-time logits in the last
bits (measured on SmolLM2 in fp32, 1 thread, 6 real prompts of 150-600 tokens batched 6 at a time: at most
6.6e-5 over 144 steps). A
token choice can only differ where the two best scores are that close. Each
row therefore records the smallest gap between its chosen score and the
runner-up over all its steps; the backend regenerates one at a time every row
whose gap fell below :data:`TIE_MARGIN`. So batched output equals one-at-a-time
output token for token whenever the numeric difference between the two paths
stays below half the margin — every row that could flip is redone.

Sampling (``temperature > 0``) uses the Gumbel-max rule: token =
argmax(logits / T + g) with g = -log(-log(u)), u drawn from a generator seeded
for that request alone, one vocabulary-sized draw per step. That samples from
softmax(logits / T), is the same for a row whether batched or not, and falls
under the same gap rule as greedy decoding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase
from transformers.cache_utils import DynamicCache, DynamicLayer

from longread.models.hf.cache_argument import with_cache
from longread.models.hf.shared_prefix import prefill
from longread.models.requests import STOPPED_BY_EOS, STOPPED_BY_MAX_TOKENS, STOPPED_BY_STOP, Progress

TIE_MARGIN = 2e-3
"""A batched row whose best and second-best scores came closer than this (in logits) at any step is
regenerated one at a time."""


@dataclass(frozen=True, slots=True)
class Decoding:
    """One prompt's token ids and how to continue it."""

    prompt: tuple[int, ...]
    max_tokens: int
    stop: tuple[str, ...] = ()
    temperature: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.prompt:
            raise ValueError("a prompt needs at least one token (the backend puts its prefix token there)")


@dataclass(frozen=True, slots=True)
class Decoded:
    text: str
    """The generated text, cut before the first stop string."""
    n_generated_tokens: int
    stopped_by: str
    min_gap: float
    """Smallest gap between the chosen token's score and the runner-up's over all steps."""


class TokenChooser:
    """Greedy argmax, or Gumbel-max with noise from this row's own seeded generator."""

    def __init__(self, temperature: float, seed: int) -> None:
        self.temperature = temperature
        self.generator = torch.Generator().manual_seed(seed) if temperature > 0 else None

    def choose(self, logits: torch.Tensor) -> tuple[int, float]:
        """(token id, gap to the runner-up) for one row's vocabulary logits."""
        scores = logits.detach().to("cpu", torch.float32)
        if self.generator is not None:
            uniform = torch.rand(scores.shape, generator=self.generator, dtype=torch.float32)
            scores = scores / self.temperature - torch.log(-torch.log(uniform))
        top = torch.topk(scores, 2) if scores.numel() > 1 else torch.topk(scores, 1)
        gap = float(top.values[0] - top.values[1]) if top.values.numel() > 1 else math.inf
        return int(top.indices[0]), gap


class RowState:
    """The tokens one row has produced and whether it has stopped (eos, a stop string, max_tokens)."""

    def __init__(self, decoding: Decoding, tokenizer: PreTrainedTokenizerBase, eos_id: int | None) -> None:
        self.decoding = decoding
        self.tokenizer = tokenizer
        self.eos_id = eos_id
        self.chooser = TokenChooser(decoding.temperature, decoding.seed)
        self.tokens: list[int] = []
        self.text = ""
        self.stopped_by = STOPPED_BY_MAX_TOKENS
        self.steps = 0
        self.min_gap = math.inf

    def step(self, logits: torch.Tensor) -> int | None:
        """Choose the next token from ``logits``; the token to feed next, or None when the row stops."""
        token, gap = self.chooser.choose(logits)
        self.steps += 1
        self.min_gap = min(self.min_gap, gap)
        if token == self.eos_id:
            self.stopped_by = STOPPED_BY_EOS
            return None
        self.tokens.append(token)
        self.text = str(self.tokenizer.decode(self.tokens, skip_special_tokens=True))
        stop = self.decoding.stop
        cut = min((self.text.find(s) for s in stop if s in self.text), default=-1)
        if cut >= 0:
            self.text = self.text[:cut]
            self.stopped_by = STOPPED_BY_STOP
            return None
        if self.steps >= self.decoding.max_tokens:
            return None
        return token

    def result(self) -> Decoded:
        return Decoded(self.text, len(self.tokens), self.stopped_by, self.min_gap)


def _device(model: PreTrainedModel) -> torch.device:
    return next(model.parameters()).device


@torch.inference_mode()
def generate_one(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    decoding: Decoding,
    *,
    prefill_chunk: int,
    progress: Progress | None = None,
) -> Decoded:
    """The reference path: prefill ``prompt[:-1]`` in chunks, then one token per forward."""
    state = prefill(model, decoding.prompt[:-1], prefill_chunk, progress)
    return decode_on_cache(model, tokenizer, state.cache, decoding, progress)


@torch.inference_mode()
def decode_on_cache(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    cache: DynamicCache,
    decoding: Decoding,
    progress: Progress | None = None,
) -> Decoded:
    """Feed ``decoding.prompt[-1]`` on a cache that holds the rest of the prompt, then one token per forward
    until eos, a stop string or ``max_tokens`` (the cache grows in place)."""
    device = _device(model)
    row = RowState(decoding, tokenizer, tokenizer.eos_token_id)
    next_id: int | None = decoding.prompt[-1]
    while next_id is not None:
        logits = model(
            input_ids=torch.tensor([[next_id]], device=device),
            **with_cache(model, cache),
            use_cache=True,
            logits_to_keep=1,
        ).logits[0, -1]
        if progress is not None:
            progress(1)
        next_id = row.step(logits)
    return row.result()


def _stack_left_padded(
    model: PreTrainedModel, states: Sequence[DynamicCache], lengths: Sequence[int], width: int
) -> DynamicCache:
    """One batch cache of ``width`` positions from per-row caches, each row's keys/values at the right end."""
    cache = DynamicCache(config=model.config)
    if width == 0:
        return cache
    filled = next(state for state, n in zip(states, lengths, strict=True) if n)
    for layer_index in range(len(filled.layers)):
        stacked: list[torch.Tensor] = []
        for part in ("keys", "values"):
            rows = []
            for state, n in zip(states, lengths, strict=True):
                reference: torch.Tensor = getattr(filled.layers[layer_index], part)
                zeros = reference.new_zeros((1, reference.shape[1], width - n, reference.shape[3]))
                rows.append(
                    torch.cat([zeros, getattr(state.layers[layer_index], part)], dim=2) if n else zeros
                )
            stacked.append(torch.cat(rows, dim=0))
        cache.update(stacked[0], stacked[1], layer_index)
    return cache


@torch.inference_mode()
def generate_batch(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    decodings: Sequence[Decoding],
    *,
    pad_id: int,
    prefill_chunk: int,
    progress: Progress | None = None,
) -> list[Decoded]:
    """All ``decodings`` at once: left padding, attention mask, per-row position ids; rows leave when done."""
    if not decodings:
        return []
    device = _device(model)
    rows = [RowState(d, tokenizer, tokenizer.eos_token_id) for d in decodings]
    prefixes = [d.prompt[:-1] for d in decodings]
    width = max(len(p) for p in prefixes)
    mask = torch.zeros((len(rows), width), dtype=torch.long, device=device)
    for i, prefix in enumerate(prefixes):
        mask[i, width - len(prefix) :] = 1
    # Each prompt is prefilled alone, exactly as one at a time (no padding to compute), and the caches are
    # then stacked, left-padded with zeros that the mask hides: only the decoding steps are batched.
    states = [prefill(model, prefix, prefill_chunk, progress).cache for prefix in prefixes]
    if not all(type(layer) is DynamicLayer for state in states for layer in state.layers):
        # Sliding-window (and other special) layers keep their own bookkeeping: decode one at a time.
        return [
            generate_one(model, tokenizer, d, prefill_chunk=prefill_chunk, progress=progress)
            for d in decodings
        ]
    cache = _stack_left_padded(model, states, [len(p) for p in prefixes], width)
    del states
    active = list(range(len(rows)))
    next_ids = torch.tensor([d.prompt[-1] for d in decodings], dtype=torch.long, device=device)
    next_positions = torch.tensor([len(p) for p in prefixes], dtype=torch.long, device=device)
    while active:
        mask = torch.cat([mask, torch.ones((len(active), 1), dtype=torch.long, device=device)], dim=1)
        logits = model(
            input_ids=next_ids[:, None],
            attention_mask=mask,
            position_ids=next_positions[:, None],
            **with_cache(model, cache),
            use_cache=True,
            logits_to_keep=1,
        ).logits[:, -1]
        if progress is not None:
            progress(len(active))
        keep: list[int] = []
        fed: list[int] = []
        for j, row_index in enumerate(active):
            token = rows[row_index].step(logits[j])
            if token is not None:
                keep.append(j)
                fed.append(token)
        if len(keep) < len(active):
            if not keep:
                break
            index = torch.tensor(keep, dtype=torch.long, device=device)
            cache.batch_select_indices(index)
            mask = mask[index]
            next_positions = next_positions[index]
            active = [active[j] for j in keep]
        next_ids = torch.tensor(fed, dtype=torch.long, device=device)
        next_positions = next_positions + 1
    return [row.result() for row in rows]
