"""Shared pieces of the model-layer tests: backends loaded once per session, and real book text."""

from __future__ import annotations

import functools
import gzip

from longread.models.hf.backend import HFBackend
from longread.models.registry import load_backend
from tests.helpers import REPO_ROOT

SHARED = REPO_ROOT.parent / "shared"
PRIDE_AND_PREJUDICE = SHARED / "corpus" / "gutenberg" / "pg1342.txt.gz"


@functools.cache
def backend(spec: str, max_length: int | None = None) -> HFBackend:
    """One backend per (spec, window) for the whole session; ``tuned`` gives copies with other settings."""
    loaded = load_backend(spec, max_length=max_length)
    assert isinstance(loaded, HFBackend)
    return loaded


def tuned(
    spec: str,
    *,
    mode: str = "shared",
    prefill_chunk: int = 512,
    batch_size: int = 8,
    max_length: int | None = None,
) -> HFBackend:
    """A backend sharing the cached model (one per spec, any window) with its own scoring settings."""
    base = backend(spec)
    return HFBackend(
        base.loaded,
        spec=spec,
        mode="naive" if mode == "naive" else "shared",
        prefill_chunk=prefill_chunk,
        batch_size=batch_size,
        max_length=max_length,
    )


@functools.cache
def book_text() -> str:
    """Pride and Prejudice as Gutenberg ships it, with line ends normalised."""
    with gzip.open(PRIDE_AND_PREJUDICE, "rb") as fh:
        return fh.read().decode("utf-8-sig").replace("\r\n", "\n")
