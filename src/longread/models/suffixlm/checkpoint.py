"""The shipped SuffixLM file (config, fp16 weights, split, command line, history); loading any checkpoint."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import torch

from longread.models.suffixlm.config import TrainConfig
from longread.models.suffixlm.encoder import EncoderSpec, SegmentEncoder
from longread.models.suffixlm.model import SuffixLM

FORMAT = "longread-suffixlm"
SHIPPED_NAME = "suffixlm.pt"


def shipped_path() -> Path:
    return Path(str(resources.files("longread") / "data" / "suffixlm" / SHIPPED_NAME))


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def export(training_checkpoint: Path, dest: Path) -> Path:
    """A training checkpoint → the small file ``--model suffixlm:PATH`` loads (fp16, no optimizer)."""
    state = torch.load(training_checkpoint, map_location="cpu", weights_only=False)
    small = {
        "format": FORMAT,
        "version": 1,
        "config": state["config"],
        "model": {k: v.half() if v.is_floating_point() else v for k, v in state["model"].items()},
        "encoder": {k: v.half() for k, v in state["encoder"].items()},
        "split": state["split"],
        "command_line": state["command_line"],
        "history": state["history"],
        "epoch": state["epoch"],
        "encoder_fingerprint": state["encoder_fingerprint"],
    }
    dest.parent.mkdir(parents=True, exist_ok=True)
    temporary = dest.with_suffix(".tmp")
    torch.save(small, temporary)
    os.replace(temporary, dest)
    return dest


@dataclass
class LoadedSuffixLM:
    config: TrainConfig
    model: SuffixLM
    encoder: SegmentEncoder
    meta: dict[str, Any]
    path: Path
    sha256: str


def load(path: Path, device: str = "cpu") -> LoadedSuffixLM:
    """An exported file or a training checkpoint (``last.pt`` / ``best.pt``)."""
    if not path.is_file():
        raise FileNotFoundError(
            f"SuffixLM checkpoint {path} does not exist; train one with `longread train suffixlm`"
        )
    state = torch.load(path, map_location="cpu", weights_only=False)
    config = TrainConfig.model_validate(state["config"])
    m = config.model
    encoder = SegmentEncoder(EncoderSpec(m.encoder, m.encoder_layers, m.pooling))
    if state.get("encoder"):
        encoder.load_state_dict({k: v.float() for k, v in state["encoder"].items()}, strict=False)
    trained_on = state.get("encoder_fingerprint")
    if trained_on and not state.get("encoder") and trained_on != encoder.fingerprint:
        raise ValueError(
            f"{path} was trained on encoder {trained_on}, but {m.encoder!r} loads as "
            f"{encoder.fingerprint}; install the encoder it was trained with"
        )
    model = SuffixLM(m)
    model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in state["model"].items()})
    model.eval().to(device)
    encoder.eval().to(device)
    meta = {k: state.get(k) for k in ("split", "command_line", "history", "epoch")}
    meta["encoder_trained"] = bool(state.get("encoder"))
    return LoadedSuffixLM(config, model, encoder, meta, path, file_sha256(path))
