"""Tiny SuffixLM pieces for fast tests: a random BERT encoder folder, synthetic books, a tiny config."""

from __future__ import annotations

import random
from pathlib import Path

import torch

from longread.models.suffixlm.config import ModelConfig, TrainConfig
from longread.models.suffixlm.encoder import minilm_path

WORDS = [
    "the",
    "ship",
    "sailed",
    "north",
    "under",
    "grey",
    "skies",
    "while",
    "captain",
    "walton",
    "wrote",
    "letters",
    "to",
    "his",
    "sister",
    "margaret",
    "about",
    "ice",
    "fog",
    "the",
    "creature",
    "victor",
    "geneva",
    "mountains",
    "lake",
    "storm",
    "night",
    "candle",
    "letter",
    "father",
    "friend",
]
ROMAN = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"]


def tiny_encoder_folder(root: Path) -> Path:
    """A random 2-layer BERT with MiniLM's tokenizer, saved as an HF folder (no download)."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    folder = root / "tiny-encoder"
    if (folder / "config.json").is_file():
        return folder
    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=160,
    )
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def write_books(root: Path, count: int = 4, chapters: int = 9, sentences: int = 24) -> list[Path]:
    rng = random.Random(7)
    paths = []
    for number in range(count):
        parts = []
        for chapter in range(chapters):
            body = " ".join(sentence(rng, rng.randint(4, 30)) for _ in range(sentences))
            parts.append(f"CHAPTER {ROMAN[chapter]}\n\n{body}\n")
        path = root / f"book{number}.txt"
        path.write_text("\n\n".join(parts), encoding="utf-8")
        paths.append(path)
    return paths


def tiny_config(root: Path, books: list[Path], out: Path, **overrides: object) -> TrainConfig:
    model = ModelConfig(
        encoder=str(tiny_encoder_folder(root)),
        encoder_layers=None,
        d_model=16,
        layers=1,
        heads=2,
        ffn=32,
        context_segments=8,
        variant=str(overrides.pop("variant", "A")),  # type: ignore[arg-type]
    )
    values: dict[str, object] = {
        "books": [str(p) for p in books],
        "out": str(out),
        "model": model.model_dump(),
        "train_books": None,
        "val_books": 1,
        "max_segments_per_book": 60,
        "epochs": 2,
        "batch_size": 4,
        "lr": 1e-3,
        "warmup_steps": 2,
        "val_prefix_tokens": 256,
        "val_instances_per_book": 3,
        "cache_dir": str(root / "cache"),
        "checkpoint_every": 1,
    }
    values.update(overrides)
    return TrainConfig.model_validate(values)
