"""The tokenizer an export counts its cuts in: the paper's GPT-2 budgets, or a model's own."""

from __future__ import annotations

from pathlib import Path

from longread.errors import LongreadError
from longread.text.tokenizers import NamedTokenizer, load_tokenizer

TOKENIZER_CHOICES = "gpt2 (the ChapterBreak paper's budgets), smollm2, gemma3 or hf:FOLDER"


def model_folder(name: str) -> Path:
    """The Hugging Face folder of a local model spec (built into longread's cache on first use)."""
    from longread.models.hf.loading import (
        gguf_cache_folder,
        load_gemma3,
        load_gguf,
        smollm2_gguf_path,
    )

    if name == "smollm2":
        gguf = smollm2_gguf_path()
        folder = gguf_cache_folder(gguf, "smollm2")
        if not (folder / "tokenizer.json").is_file():
            load_gguf(gguf, name="smollm2")
        return folder
    if name == "gemma3":
        return Path(load_gemma3().weights)
    raise LongreadError(f"unknown model {name!r} — use smollm2 or gemma3")


def export_tokenizer(name: str) -> NamedTokenizer:
    """``gpt2`` | ``smollm2`` | ``gemma3`` | ``hf:FOLDER`` (the name as given goes into card and YAML)."""
    if name == "gpt2" or name.startswith("hf:"):
        return load_tokenizer(name)
    if name in ("smollm2", "gemma3"):
        return load_tokenizer(f"hf:{model_folder(name)}")
    raise LongreadError(f"unknown tokenizer {name!r} — use {TOKENIZER_CHOICES}")
