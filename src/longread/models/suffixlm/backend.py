"""SuffixLM as a longread ranker (capability ``rank``).

Per request: the context is cut from the LEFT to ``max_context_tokens`` encoder
tokens and packed into sentence-aligned segments from its end (its last segment
ends where the candidates start); the model reads the last ``context_segments``
of them. Each candidate is cut to its first ``max_candidate_tokens`` tokens and
its first segment encoded. Score = dot product of the predicted next-segment
vector with the candidate's vector. Equal scores are returned as they are; the
caller's tie rule decides (longread's runner counts a tie with the gold as wrong).
Segment vectors of the frozen encoder are cached on disk, so the trailing
segments shared by a context's shorter and longer cuts are encoded once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from longread.models.requests import RANKER_CAPABILITIES, Progress, RankRequest, RankResult
from longread.models.suffixlm.checkpoint import LoadedSuffixLM, load, shipped_path
from longread.models.suffixlm.encoder import CachedEncoder, EmbeddingCache, default_cache_dir
from longread.models.suffixlm.segments import Segmenter


class SuffixLMRanker:
    capabilities = RANKER_CAPABILITIES

    def __init__(
        self,
        loaded: LoadedSuffixLM,
        *,
        spec: str = "suffixlm",
        device: str = "cpu",
        cache_dir: Path | None = None,
        use_cache: bool = True,
    ) -> None:
        self.name = spec
        self.spec = spec
        self.loaded = loaded
        self.device = torch.device(device)
        self.model = loaded.model
        config = loaded.config.model
        self.segmenter = Segmenter(loaded.encoder.tokenize, config.segment_tokens)
        # A fine-tuned encoder (variants D, E) is not the packaged one: its vectors must not share a cache.
        cacheable = use_cache and not loaded.meta.get("encoder_trained")
        cache = EmbeddingCache((cache_dir or default_cache_dir()) / "segments.sqlite") if cacheable else None
        self.encoder = CachedEncoder(loaded.encoder, cache)

    def count_tokens(self, text: str) -> int:
        return sum(len(s) for s in self.segmenter.sentence_tokens(text))

    def rank(self, requests: Sequence[RankRequest], progress: Progress | None = None) -> list[RankResult]:
        return [self._rank_one(request, progress) for request in requests]

    def _rank_one(self, request: RankRequest, progress: Progress | None) -> RankResult:
        context, original, kept = self.segmenter.context_segments(request.context, request.max_context_tokens)
        context = context[-self.loaded.config.model.context_segments :]
        firsts = [self.segmenter.first_segment(c, request.max_candidate_tokens) for c in request.candidates]
        context_vectors = self.encoder.encode(context)
        candidate_vectors = self.encoder.encode([segment for segment, _, _ in firsts])
        if len(context_vectors) == 0:
            # Nothing to read: every candidate is equally likely.
            scores = np.zeros(len(firsts))
        else:
            scores = (
                self.model.score(
                    torch.from_numpy(context_vectors).to(self.device),
                    torch.from_numpy(candidate_vectors).to(self.device),
                )
                .float()
                .cpu()
                .numpy()
            )
        if progress is not None:
            progress(kept + sum(read for _, read, _ in firsts))
        return RankResult(
            scores=tuple(float(s) for s in scores),
            context_tokens_original=original,
            context_tokens_kept=kept,
            candidate_tokens=tuple(read for _, read, _ in firsts),
            candidate_tokens_original=tuple(total for _, _, total in firsts),
        )

    def describe(self) -> dict[str, str]:
        config = self.loaded.config.model
        return {
            "name": self.name,
            "spec": self.spec,
            "kind": "suffixlm",
            "checkpoint": str(self.loaded.path),
            "weights_sha256": self.loaded.sha256,
            "variant": config.variant,
            "encoder": config.encoder,
            "encoder_fingerprint": self.loaded.encoder.fingerprint,
            "encoder_layers": str(config.encoder_layers),
            "pooling": config.pooling,
            "d_model": str(config.d_model),
            "layers": str(config.layers),
            "heads": str(config.heads),
            "context_segments": str(config.context_segments),
            "segment_tokens": str(config.segment_tokens),
            "device": str(self.device),
            "score": "dot product of predicted and candidate first-segment vectors (unit-normalised)",
        }


def load_ranker(path: str | None = None, *, spec: str = "suffixlm", device: str = "cpu") -> SuffixLMRanker:
    """``path`` None = the checkpoint shipped in the package."""
    checkpoint = Path(path).expanduser() if path else shipped_path()
    return SuffixLMRanker(load(checkpoint, device), spec=spec, device=device)
