"""What ``longread train suffixlm`` does: configure, train (resuming), export the small checkpoint."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

from longread.models.suffixlm.checkpoint import export
from longread.models.suffixlm.config import ModelConfig, TrainConfig
from longread.models.suffixlm.prepare import QuestionBuilder
from longread.models.suffixlm.train import BEST, CHECKPOINT, train

EXPORTED = "suffixlm.pt"


def train_and_export(
    config: TrainConfig, questions: QuestionBuilder, *, threads: int | None = None, ship_best: bool = False
) -> Path:
    """Train (resuming from ``out/last.pt``; ``questions`` makes the validation questions), then write
    ``out/suffixlm.pt`` from the last (or best) epoch.

    The last epoch by default: a few dozen validation instances are too few to pick an epoch by.
    """
    from longread.models.threads import set_threads

    set_threads(threads)
    started = time.perf_counter()
    encoded = 0
    last_report = [0.0]

    def progress(count: int) -> None:
        nonlocal encoded
        encoded += count
        now = time.perf_counter()
        if now - last_report[0] > 15:
            last_report[0] = now
            rate = encoded / max(1e-9, now - started)
            print(f"encoded {encoded} segments ({rate:.1f} segments/s)", flush=True)

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - started:7.1f}s] {message}", flush=True)

    command_line = "longread " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    trainer = train(config, questions, log, command_line=command_line, progress=progress)
    source = Path(config.out) / (BEST if ship_best and (Path(config.out) / BEST).is_file() else CHECKPOINT)
    dest = export(source, Path(config.out) / EXPORTED)
    log(f"exported {source.name} → {dest} ({dest.stat().st_size / 1e6:.1f} MB); history: {trainer.history}")
    return dest


def make_config(
    books: list[str],
    out: str,
    *,
    model: ModelConfig,
    **training: object,
) -> TrainConfig:
    return TrainConfig.model_validate({"books": books, "out": out, "model": model.model_dump(), **training})
