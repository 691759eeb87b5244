"""SuffixLM training: InfoNCE, in-batch negatives, Adam, warm-up + cosine, gradient clip, checkpoints, resume.

Every batch is a set of windows of ``context_segments + 1`` consecutive segments
of training books; at each position the model predicts the next segment's vector,
and the true next segment competes with every other target in the batch. The
epoch's window order comes from (seed, epoch), and the checkpoint keeps the
optimizer, schedule and RNG states, so a run killed and resumed goes on exactly
where the last checkpoint left it. At the end of each epoch the model ranks
ChapterBreak instances from the validation books (a tie with the gold is wrong).
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from longread.models.suffixlm.config import FROZEN_VARIANTS, TrainConfig
from longread.models.suffixlm.encoder import SegmentEncoder
from longread.models.suffixlm.model import SuffixLM
from longread.models.suffixlm.prepare import Prepared, QuestionBuilder, prepare

CHECKPOINT = "last.pt"
BEST = "best.pt"
HISTORY = "history.jsonl"


@dataclass(frozen=True)
class Window:
    book: int
    start: int
    length: int


def epoch_windows(lengths: Sequence[int], width: int, seed: int, epoch: int) -> list[Window]:
    """Every book tiled by windows of ``width`` segments from a random offset; the order shuffled."""
    rng = random.Random(f"suffixlm-windows-{seed}-{epoch}")
    windows: list[Window] = []
    for book, length in enumerate(lengths):
        offset = rng.randrange(max(1, min(width, length - 1)))
        starts = [0] if offset == 0 else [0, offset]
        start = offset + width - 1 if offset else width - 1
        while start < length - 1:
            starts.append(start)
            start += width - 1
        for s in starts:
            windows.append(Window(book, s, min(width, length - s)))
    rng.shuffle(windows)
    return [w for w in windows if w.length >= 2]


def info_nce(predictions: torch.Tensor, targets: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of each prediction against every target in the batch; the true one is on the diagonal."""
    logits = scale * predictions @ targets.T
    return nn.functional.cross_entropy(logits, torch.arange(len(targets), device=logits.device))


def lr_factor(step: int, warmup: int, total: int) -> float:
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


class Trainer:
    def __init__(
        self,
        config: TrainConfig,
        data: Prepared,
        log: Callable[[str], None],
        command_line: str = "",
    ) -> None:
        self.config = config
        self.data = data
        self.log = log
        self.command_line = command_line
        self.out = Path(config.out)
        self.device = torch.device(config.device)
        torch.manual_seed(config.seed)
        model_config = config.model.model_copy(update={"encoder_dim": data.encoder.dim})
        self.config = config.model_copy(update={"model": model_config})
        self.model = SuffixLM(model_config).to(self.device)
        self.frozen = model_config.variant in FROZEN_VARIANTS
        self.encoder: SegmentEncoder | None = None
        params = list(self.model.parameters())
        if not self.frozen:
            self.encoder = data.encoder.to(self.device)
            params += _trainable_encoder_params(self.encoder, model_config.variant, model_config.tune_layers)
        self.optimizer = torch.optim.Adam(params, lr=config.lr, weight_decay=config.weight_decay)
        width = model_config.context_segments + 1
        lengths = [len(b.segments) for b in data.train]
        self.steps_per_epoch = math.ceil(
            len(epoch_windows(lengths, width, config.seed, 0)) / config.batch_size
        )
        self.total_steps = self.steps_per_epoch * config.epochs
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: lr_factor(s, config.warmup_steps, self.total_steps)
        )
        self.epoch = 0
        self.step_in_epoch = 0
        self.step = 0
        self.history: list[dict[str, Any]] = []
        self.best_accuracy = -1.0

    # ---- data -------------------------------------------------------------------------------
    def _vectors(self, book: int, start: int, length: int) -> torch.Tensor:
        if self.frozen:
            return torch.from_numpy(self.data.train_vectors[book][start : start + length])
        assert self.encoder is not None
        encoded: torch.Tensor = self.encoder(self.data.train[book].segments[start : start + length])
        return encoded

    def _batch(self, windows: Sequence[Window]) -> tuple[torch.Tensor, torch.Tensor]:
        width = max(w.length for w in windows)
        dim = self.data.encoder.dim
        vectors = torch.zeros(len(windows), width, dim)
        valid = torch.zeros(len(windows), width, dtype=torch.bool)
        for row, window in enumerate(windows):
            vectors[row, : window.length] = self._vectors(window.book, window.start, window.length)
            valid[row, : window.length] = True
        return vectors.to(self.device), valid.to(self.device)

    def loss(self, windows: Sequence[Window], generator: torch.Generator) -> tuple[torch.Tensor, int]:
        vectors, valid = self._batch(windows)
        inputs, input_valid = vectors[:, :-1], valid[:, :-1].clone()
        if self.config.model.variant == "C" and self.config.segdrop > 0:
            drop = torch.rand(input_valid.shape, generator=generator) < self.config.segdrop
            drop[:, 0] = False  # every position keeps something to read
            input_valid &= ~drop.to(input_valid.device)
        predictions = self.model(inputs, input_valid)
        target_mask = valid[:, 1:]
        targets = self.model.targets(vectors[:, 1:][target_mask])
        return info_nce(predictions[target_mask], targets, self.model.scale()), int(target_mask.sum())

    # ---- validation -------------------------------------------------------------------------
    @torch.no_grad()
    def validate(self) -> tuple[float, int]:
        self.model.eval()
        correct = 0
        for item, (context, candidates) in zip(
            self.data.validation, self.data.validation_vectors, strict=True
        ):
            if not self.frozen:
                assert self.encoder is not None
                context = self.encoder(item.context).cpu().numpy() if item.context else context
                candidates = self.encoder(item.candidates).cpu().numpy()
            if len(context) == 0:
                continue
            scores = self.model.score(
                torch.from_numpy(context).to(self.device), torch.from_numpy(candidates).to(self.device)
            )
            gold = scores[0]
            correct += int(bool((scores[1:] < gold).all()))
        self.model.train()
        return (correct / len(self.data.validation) if self.data.validation else float("nan")), len(
            self.data.validation
        )

    # ---- checkpoints ------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        return {
            "config": self.config.model_dump(mode="json"),
            "model": self.model.state_dict(),
            "encoder": _encoder_state(self.encoder, self.config.model.variant),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "epoch": self.epoch,
            "step_in_epoch": self.step_in_epoch,
            "step": self.step,
            "history": self.history,
            "best_accuracy": self.best_accuracy,
            "torch_rng": torch.get_rng_state(),
            "split": _split_dict(self.data),
            "command_line": self.command_line,
            "encoder_fingerprint": self.data.encoder.fingerprint,
        }

    def save(self, name: str = CHECKPOINT) -> Path:
        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / name
        temporary = path.with_suffix(".tmp")
        torch.save(self.state(), temporary)
        os.replace(temporary, path)
        return path

    def load(self, path: Path) -> None:
        state = torch.load(path, map_location=self.device, weights_only=False)
        saved = TrainConfig.model_validate(state["config"])
        if saved.model_dump(exclude={"epochs", "out"}) != self.config.model_dump(exclude={"epochs", "out"}):
            raise ValueError(
                f"{path} was trained with another configuration; use a new --out or the same options"
            )
        self.model.load_state_dict(state["model"])
        if self.encoder is not None and state["encoder"]:
            self.encoder.load_state_dict(state["encoder"], strict=False)
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.epoch = state["epoch"]
        self.step_in_epoch = state["step_in_epoch"]
        self.step = state["step"]
        self.history = state["history"]
        self.best_accuracy = state["best_accuracy"]
        torch.set_rng_state(state["torch_rng"])

    # ---- loop -------------------------------------------------------------------------------
    def run(self) -> list[dict[str, Any]]:
        config = self.config
        width = config.model.context_segments + 1
        lengths = [len(b.segments) for b in self.data.train]
        self.model.train()
        started = time.perf_counter()
        done_at_start = self.step
        segments_seen = 0
        last_loss = float("nan")
        while self.epoch < config.epochs:
            windows = epoch_windows(lengths, width, config.seed, self.epoch)
            batches = [windows[i : i + config.batch_size] for i in range(0, len(windows), config.batch_size)]
            for index, batch in enumerate(batches):
                if index < self.step_in_epoch:
                    continue
                # Seeded per batch, so a resumed epoch drops the same segments as an uninterrupted one.
                generator = torch.Generator().manual_seed(
                    (config.seed * 1_000_003 + self.epoch) * 100_003 + index
                )
                loss, targets = self.loss(batch, generator)
                last_loss = float(loss.item())
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(
                    [p for group in self.optimizer.param_groups for p in group["params"]], config.grad_clip
                )
                self.optimizer.step()
                self.scheduler.step()
                self.step += 1
                self.step_in_epoch = index + 1
                segments_seen += sum(w.length for w in batch)
                elapsed = time.perf_counter() - started
                rate = segments_seen / elapsed if elapsed > 0 else 0.0
                steps_left = self.total_steps - self.step
                steps_done = self.step - done_at_start
                eta = elapsed / steps_done * steps_left if steps_done else float("nan")
                if self.step % 10 == 0 or index == len(batches) - 1:
                    self.log(
                        f"epoch {self.epoch + 1}/{config.epochs} step {self.step}/{self.total_steps} "
                        f"loss {last_loss:.3f} ({targets} targets) {rate:.0f} segments/s ETA {eta:.0f}s"
                    )
                if config.checkpoint_every and self.step % config.checkpoint_every == 0:
                    self.save()
            accuracy, count = self.validate()
            record = {
                "epoch": self.epoch + 1,
                "step": self.step,
                "loss": round(last_loss, 4),
                "val_accuracy": accuracy,
                "val_instances": count,
                "segments_per_s": round(segments_seen / max(1e-9, time.perf_counter() - started), 1),
            }
            self.history.append(record)
            self.log(
                f"epoch {self.epoch + 1}: validation accuracy {accuracy:.3f} "
                f"on {count} ChapterBreak instances"
            )
            self.epoch += 1
            self.step_in_epoch = 0
            if accuracy > self.best_accuracy:
                self.best_accuracy = accuracy
                self.save(BEST)
            self.save()
            with (self.out / HISTORY).open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(record) + "\n")
        return self.history


def _trainable_encoder_params(encoder: SegmentEncoder, variant: str, tune_layers: int) -> list[nn.Parameter]:
    for p in encoder.parameters():
        p.requires_grad_(variant == "E")
    if variant == "D":
        for layer in encoder.model.encoder.layer[-tune_layers:]:
            for p in layer.parameters():
                p.requires_grad_(True)
    encoder.train()
    return [p for p in encoder.parameters() if p.requires_grad]


def _encoder_state(encoder: SegmentEncoder | None, variant: str) -> dict[str, torch.Tensor]:
    """Encoder weights a checkpoint must carry: none when frozen (they come from the encoder's package)."""
    if encoder is None:
        return {}
    return {k: v for k, v in encoder.state_dict().items() if v.requires_grad or variant == "E"} | {
        name: p.detach() for name, p in encoder.named_parameters() if p.requires_grad
    }


def _split_dict(data: Prepared) -> dict[str, list[str]]:
    return {
        "train": [Path(p).name for p in data.split.train],
        "validation": [Path(p).name for p in data.split.validation],
        "unused": [Path(p).name for p in data.split.unused],
    }


def train(
    config: TrainConfig,
    questions: QuestionBuilder,
    log: Callable[[str], None] = print,
    *,
    command_line: str = "",
    progress: Callable[[int], None] | None = None,
) -> Trainer:
    """Prepare the data (encoding only what the cache lacks; ``questions`` makes the validation questions),
    resume from ``out/last.pt`` if there, train."""
    torch.manual_seed(config.seed)
    np.random.seed(config.seed)
    data = prepare(config, questions, log, progress)
    log(f"segments encoded now: {data.encoded} (the rest came from the cache)")
    trainer = Trainer(config, data, log, command_line)
    last = Path(config.out) / CHECKPOINT
    if last.is_file():
        trainer.load(last)
        log(f"resumed from {last}: epoch {trainer.epoch + 1}, step {trainer.step}")
    trainer.run()
    return trainer
