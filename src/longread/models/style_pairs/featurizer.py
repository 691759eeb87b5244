"""One interface over both feature kinds: paragraphs → raw vectors, with the settings that fix them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from longread.models.style_pairs.features_stylometric import (
    StylometricSettings,
    feature_names,
    stylometric_matrix,
)


class Featurizer:
    """``kind`` = ``stylometric`` (settings: ``trigram_buckets``) or ``minilm`` (no settings)."""

    def __init__(self, kind: str, settings: dict[str, Any] | None = None, *, cache_dir: Path | None = None):
        settings = dict(settings or {})
        self.kind = kind
        if kind == "stylometric":
            unknown = sorted(set(settings) - {"trigram_buckets"})
            if unknown:
                raise ValueError(f"unknown stylometric settings: {', '.join(unknown)}")
            self._stylometric = StylometricSettings(**settings)
            self.settings: dict[str, Any] = self._stylometric.as_json()
            self.width = len(feature_names(self._stylometric))
            self.fingerprint = f"stylometric|trigram_buckets={self._stylometric.trigram_buckets}"
        elif kind == "minilm":
            if settings:
                raise ValueError(f"minilm features take no settings, got {sorted(settings)}")
            from longread.models.style_pairs.features_minilm import MiniLMFeatures

            self._minilm = MiniLMFeatures(cache_dir=cache_dir)
            self.settings = {}
            self.width = self._minilm.dim
            self.fingerprint = f"minilm|{self._minilm.fingerprint}"
        else:
            raise ValueError(f"unknown feature kind {kind!r}; use stylometric or minilm")

    def vectors(self, paragraphs: Sequence[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """float64 ``(len(paragraphs), width)``."""
        if self.kind == "stylometric":
            return stylometric_matrix(paragraphs, self._stylometric)
        return self._minilm.encode(paragraphs)

    def describe(self) -> str:
        if self.kind == "stylometric":
            return (
                "stylometric: function-word frequencies, punctuation per 100 chars, word/sentence shape, "
                f"{self._stylometric.trigram_buckets} hashed char 3-gram buckets"
            )
        return "minilm: all-MiniLM-L6-v2 mean-pooled paragraph embeddings (254-token pieces averaged)"
