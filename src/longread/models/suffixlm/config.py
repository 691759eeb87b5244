"""SuffixLM's configuration: encoder, causal transformer, variant, training — stored in every checkpoint."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Variant = Literal["A", "B", "C", "D", "E"]
VARIANTS: dict[str, str] = {
    "A": "frozen encoder + causal Transformer (vectors cached)",
    "B": "frozen encoder + average attention (cumulative mean instead of self-attention)",
    "C": "frozen encoder + causal Transformer, segdrop: prefix segments dropped with p=0.2 in training",
    "D": "encoder's top layers fine-tuned (--tune-layers, default 2)",
    "E": "encoder cut to its first --encoder-layers layers, all trained",
}
FROZEN_VARIANTS = frozenset({"A", "B", "C"})


class ModelConfig(BaseModel):
    encoder: str = "minilm"
    encoder_layers: int | None = 2
    pooling: Literal["mean", "cls"] = "mean"
    encoder_dim: int = 384
    variant: Variant = "A"
    d_model: int = 256
    layers: int = 3
    heads: int = 4
    ffn: int = 1024
    dropout: float = 0.1
    context_segments: int = 64
    segment_tokens: int = 128
    tune_layers: int = 2


class TrainConfig(BaseModel):
    schema_version: int = 1
    model: ModelConfig = Field(default_factory=ModelConfig)
    books: list[str]
    out: str
    train_books: int | None = 32
    val_books: int = 4
    max_segments_per_book: int | None = 400
    seed: int = 0
    epochs: int = 8
    batch_size: int = 16
    lr: float = 7e-5
    warmup_steps: int = 50
    grad_clip: float = 0.25
    segdrop: float = 0.2
    weight_decay: float = 0.0
    val_prefix_tokens: int = 2048
    val_instances_per_book: int = 12
    device: str = "cpu"
    cache_dir: str | None = None
    encode_batch_size: int = 64
    checkpoint_every: int = 100
    """Steps between mid-epoch checkpoints (a killed run resumes from the last one)."""
