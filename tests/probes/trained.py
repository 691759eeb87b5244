"""A tiny GPT-2 trained in a test: the positive (and negative) controls of the memory probes."""

from __future__ import annotations

import torch

from longread.models.hf.backend import HFBackend
from longread.models.hf.loading import LoadedModel, load_random


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
    ``window``-token windows of them (8 a batch), or on each whole, the loss on its last ``answers`` tokens
    only (the rest is the prompt)."""
    loaded = load_random("gpt2")
    encoder = HFBackend(loaded, spec="random:gpt2").encoder
    sequences = [torch.tensor(encoder.encode_plain(text)) for text in texts]
    model, draw = loaded.model, torch.Generator().manual_seed(0)
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    if window is None:  # one batch of every text, padded on the right; the loss on the answers alone
        width = max(len(ids) for ids in sequences)
        inputs = torch.stack([torch.nn.functional.pad(ids, (0, width - len(ids))) for ids in sequences])
        mask = torch.stack([torch.arange(width) < len(ids) for ids in sequences]).long()
        # The head only where the loss is: the positions that predict each text's last `answers` tokens
        # (GPT-2's 50K-entry head over every prompt token was most of the step).
        rows = torch.tensor([row for row, _ in enumerate(sequences) for _ in range(answers)])
        at = torch.tensor([len(ids) - answers - 1 + k for ids in sequences for k in range(answers)])
        targets = torch.cat([ids[len(ids) - answers :] for ids in sequences])
    for _ in range(steps):
        if window is None:
            hidden = model.transformer(input_ids=inputs, attention_mask=mask).last_hidden_state
            logits = model.lm_head(hidden[rows, at])
            loss = torch.nn.functional.cross_entropy(logits, targets)
        else:
            joined = torch.cat(sequences)
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
