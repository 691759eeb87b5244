"""Where a horizon campaign keeps its files (every run resumable, each K's run kept)::

OUT/instances.jsonl                   the chosen instances, shared by every model
OUT/<model>/L<L>/intact               the intact run at prefix length L
OUT/<model>/L<L>/<control>-k<K>       one run per K the search tried
OUT/<model>/L<L>/planted-d<D>.jsonl   the instances planted at distance D (the model's tokens)
OUT/<model>/L<L>/planted-d<D>/intact  the copy horizon's run at D
OUT/<model>/L<L>/planted-d<D>/<control>-k<K>   the calibration gate's run
OUT/horizon.md, .json, .png, html/
"""

from __future__ import annotations

import re
from pathlib import Path

INSTANCES = "instances.jsonl"
REPORT_MD = "horizon.md"
REPORT_JSON = "horizon.json"
REPORT_PNG = "horizon.png"


def model_folder(model: str) -> str:
    """A model spec as a folder name: ``smollm2``, ``model.Q8_0.gguf``, a served model by its name after
    ``#`` (its ``?`` settings — concurrency, timeouts — change no number, so no folder)."""
    name = model.split("?", 1)[0]
    if name.startswith("openai:") and "#" in name:
        name = name.split("#", 1)[1]
    elif "/" in name or name.endswith(".gguf"):
        name = Path(name).name
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "model"


def length_dir(out: Path, model: str, length: int) -> Path:
    return out / model_folder(model) / f"L{length}"


def control_run(out: Path, model: str, length: int, control: str, keep: int) -> Path:
    return length_dir(out, model, length) / f"{control}-k{keep}"


def planted_file(out: Path, model: str, length: int, distance: int) -> Path:
    return length_dir(out, model, length) / f"planted-d{distance}.jsonl"


def planted_run(out: Path, model: str, length: int, distance: int, name: str) -> Path:
    return length_dir(out, model, length) / f"planted-d{distance}" / name
