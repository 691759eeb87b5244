"""Which transformers may convert a GGUF here, and how a converted folder names the release that made it.

GGUF reading (the tokenizer above all) changes between transformers releases: 5.2.0 builds a CodeLlama
tokenizer that adds a BOS from SmolLM2's GGUF, and splits Gemma 3's text into other ids than 5.24 does.
So a converted folder carries the release that converted it (never read as another's), and converting
under a release older than the measured floor is refused with the way out.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import transformers

from longread.models.errors import ModelLoadError

GGUF_READER_MIN = (5, 24)
"""The oldest transformers whose GGUF reading gives the shipped models their own tokenizers (5.2.0 gives
SmolLM2 a CodeLlama tokenizer with a BOS, and Gemma 3 other ids; releases between were not measured)."""


def _release(version: str) -> tuple[int, ...]:
    numbers = []
    for part in version.split(".")[:2]:
        digits = "".join(char for char in part if char.isdigit())
        numbers.append(int(digits or 0))
    return tuple(numbers)


def check_gguf_reader(gguf: Path) -> None:
    version = transformers_version()
    if _release(version) < GGUF_READER_MIN:
        wanted = ".".join(map(str, GGUF_READER_MIN))
        raise ModelLoadError(
            gguf,
            f"transformers {version} reads GGUF tokenizers wrongly (measured on the "
            f"shipped models); converting needs transformers >= {wanted}",
            "convert it once in an environment with that transformers (`longread models --folder SPEC` "
            "prints the folder it makes), then load that folder with `hf:FOLDER`",
        )


def transformers_version() -> str:
    """The installed transformers release (what converts a GGUF here)."""
    return str(transformers.__version__)


def converted_by() -> str:
    """The part of a converted model's cache folder naming the transformers release that converted it."""
    return f"tf{transformers_version()}"


def converted_folder(stem: Path) -> Path:
    """The cache folder of a GGUF (``stem`` is the folder's path without its release tag) this install
    reads: the one the installed release makes, or, under a release older than the floor (which may not
    convert, e.g. the presses' environment), the newest folder a release at or above the floor made."""
    own = stem.with_name(f"{stem.name}-{converted_by()}")
    if _release(transformers_version()) >= GGUF_READER_MIN or own.exists():
        return own
    made = [
        (_release(folder.name.rsplit("-tf", 1)[1]), folder)
        for folder in stem.parent.glob(f"{stem.name}-tf*")
        if folder.is_dir() and _release(folder.name.rsplit("-tf", 1)[1]) >= GGUF_READER_MIN
    ]
    return max(made)[1] if made else own


@contextlib.contextmanager
def one_reader_per_file() -> Iterator[None]:
    """Within: one ``gguf.GGUFReader`` per file. transformers opens a GGUF anew for the tokenizer, the config
    and the weights, and each opening parses every metadata field in Python (Gemma 3's 262,144-token
    vocabulary: ~6 s each). A reader is read-only (its arrays are read-only memory maps), so sharing one
    changes nothing read; the readers are dropped on leaving."""
    import gguf

    original = gguf.GGUFReader
    readers: dict[tuple[str, Any], Any] = {}

    def shared(path: Any, mode: Any = "r") -> Any:
        key = (str(Path(path).resolve()), mode)
        if key not in readers:
            readers[key] = original(path, mode)
        return readers[key]

    gguf.GGUFReader = shared  # type: ignore[misc,assignment]
    try:
        yield
    finally:
        gguf.GGUFReader = original  # type: ignore[misc]
        readers.clear()
