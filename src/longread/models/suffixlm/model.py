"""The causal Transformer over segment vectors (post-LayerNorm, sinusoidal positions) and its score.

It reads the encoded segments of a context and, at every position, predicts the
vector of the segment that follows. A candidate's score is the dot product of
that prediction with the candidate's projected first-segment vector (both
L2-normalised, times a learned scale: the ranking is the dot product's).
Variant B swaps self-attention for average attention (a cumulative mean over the
segments read so far, gated).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from longread.models.suffixlm.config import ModelConfig


def sinusoidal_positions(length: int, dim: int) -> torch.Tensor:
    position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
    div = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(length, dim)
    table[:, 0::2] = torch.sin(position * div)
    table[:, 1::2] = torch.cos(position * div[: table[:, 1::2].shape[1]])
    return table


class AverageAttentionLayer(nn.Module):
    """Average attention (Zhang et al. 2018): the mean of the segments so far, gated, then a post-LN FFN."""

    def __init__(self, d_model: int, ffn: int, dropout: float) -> None:
        super().__init__()
        self.average_ffn = nn.Linear(d_model, d_model)
        self.gate = nn.Linear(2 * d_model, 2 * d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.ffn = nn.Sequential(
            nn.Linear(d_model, ffn), nn.GELU(), nn.Dropout(dropout), nn.Linear(ffn, d_model)
        )
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        weights = valid.unsqueeze(-1).to(x.dtype)
        counts = weights.cumsum(1).clamp(min=1.0)
        average = self.average_ffn((x * weights).cumsum(1) / counts)
        input_gate, forget_gate = torch.sigmoid(self.gate(torch.cat([x, average], -1))).chunk(2, -1)
        x = self.norm1(x + self.dropout(input_gate * x + forget_gate * average))
        out: torch.Tensor = self.norm2(x + self.dropout(self.ffn(x)))
        return out


class SuffixLM(nn.Module):
    positions: torch.Tensor

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        d = config.d_model
        self.input = nn.Sequential(nn.Linear(config.encoder_dim, d), nn.LayerNorm(d))
        self.target = nn.Linear(config.encoder_dim, d)
        self.output = nn.Linear(d, d)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))
        self.register_buffer(
            "positions", sinusoidal_positions(config.context_segments + 1, d), persistent=False
        )
        self.dropout = nn.Dropout(config.dropout)
        self.layers = nn.ModuleList()
        for _ in range(config.layers):
            if config.variant == "B":
                self.layers.append(AverageAttentionLayer(d, config.ffn, config.dropout))
            else:
                self.layers.append(
                    nn.TransformerEncoderLayer(
                        d,
                        config.heads,
                        config.ffn,
                        config.dropout,
                        activation="gelu",
                        batch_first=True,
                        norm_first=False,  # post-LN, as the official code
                    )
                )

    def forward(self, vectors: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        """(batch, T, encoder_dim) segment vectors, (batch, T) bool → (batch, T, d) unit predictions."""
        length = vectors.shape[1]
        if length > self.positions.shape[0]:
            raise ValueError(f"{length} segments exceed the model's {self.positions.shape[0]} positions")
        x = self.input(vectors) + self.positions[:length]
        x = self.dropout(x)
        causal = torch.triu(torch.ones(length, length, dtype=torch.bool, device=x.device), diagonal=1)
        for layer in self.layers:
            if isinstance(layer, AverageAttentionLayer):
                x = layer(x, valid)
            else:
                x = layer(x, src_mask=causal, src_key_padding_mask=~valid, is_causal=True)
        return nn.functional.normalize(self.output(x), dim=-1)

    def targets(self, vectors: torch.Tensor) -> torch.Tensor:
        """Encoded candidate (next-segment) vectors → unit vectors in the prediction space."""
        return nn.functional.normalize(self.target(vectors), dim=-1)

    def scale(self) -> torch.Tensor:
        return self.logit_scale.exp().clamp(max=100.0)

    @torch.no_grad()
    def score(self, context: torch.Tensor, candidates: torch.Tensor) -> torch.Tensor:
        """One context (T, encoder_dim), candidates (k, encoder_dim) → k scores (dot products)."""
        context = context[-self.config.context_segments :]
        valid = torch.ones(1, context.shape[0], dtype=torch.bool, device=context.device)
        prediction = self.forward(context.unsqueeze(0), valid)[0, -1]
        return self.targets(candidates) @ prediction
