"""A tiny GPT-2 trained in a test: the positive (and negative) controls of the memory probes."""

from __future__ import annotations

import torch

from longread.models.hf.backend import HFBackend
from longread.models.hf.loading import LoadedModel, load_random

SEED = 0
"""Dropout draws from torch's global generator: seeded here, so a model trained in a test does not depend
on what the tests before it drew (the suite's order differs from one lane layout to another)."""


def train_tiny_gpt2(
    texts: list[str],
    name: str,
    *,
    steps: int = 150,
    window: int | None = None,
    answers: int = 0,
    stop_loss: float = 0.05,
) -> HFBackend:
    """A tiny GPT-2 trained on ``texts`` (seeded) until its batch loss is under ``stop_loss``: on random
    ``window``-token windows of them (8 a batch); or on each whole text (one batch of every text), the loss
    on its last ``answers`` tokens only (the rest is the prompt) or, with ``answers=0``, on every token."""
    loaded = load_random("gpt2")
    encoder = HFBackend(loaded, spec="random:gpt2").encoder
    sequences = [torch.tensor(encoder.encode_plain(text)) for text in texts]
    model, draw = loaded.model, torch.Generator().manual_seed(SEED)
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    if window is None:  # one batch of every text, padded on the right
        width = max(len(ids) for ids in sequences)
        inputs = torch.stack([torch.nn.functional.pad(ids, (0, width - len(ids))) for ids in sequences])
        mask = torch.stack([torch.arange(width) < len(ids) for ids in sequences]).long()
        # The head only where the loss is: the positions that predict each text's last `answers` tokens
        # (GPT-2's 50K-entry head over every prompt token was most of the step).
        rows = torch.tensor([row for row, _ in enumerate(sequences) for _ in range(answers)])
        at = torch.tensor([len(ids) - answers - 1 + k for ids in sequences for k in range(answers)])
        targets = torch.cat([ids[len(ids) - answers :] for ids in sequences])
        labels = inputs.masked_fill(mask == 0, -100)  # every token (answers=0): padding has no loss
    joined = torch.cat(sequences)  # the windows' source, joined once
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        for _ in range(steps):
            if window is None and answers:
                hidden = model.transformer(input_ids=inputs, attention_mask=mask).last_hidden_state
                loss = torch.nn.functional.cross_entropy(model.lm_head(hidden[rows, at]), targets)
            elif window is None:
                loss = model(input_ids=inputs, attention_mask=mask, labels=labels).loss
            else:
                starts = torch.randint(0, len(joined) - window, (8,), generator=draw)
                batch = torch.stack([joined[start : start + window] for start in starts])
                loss = model(input_ids=batch, labels=batch).loss
            loss.backward()
            optimiser.step()
            optimiser.zero_grad()
            if loss.item() < stop_loss:
                break
    model.eval()
    return HFBackend(LoadedModel(model, loaded.tokenizer, name, "trained in the test", name), spec=name)
