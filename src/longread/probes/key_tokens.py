"""Key tokens as LongPPL (Fang et al. 2024) chooses them: by an *evaluator* model, mapped onto the probed one.

The evaluator reads the book (the first ``--max-tokens`` of its own tokens) with the long and the short
context (:mod:`longread.models.hf.token_logprobs`). Its key tokens are those with LSD > α and LCL > β, both
the evaluator's; their character spans, adjacent ones merged, are the key text. A token of the probed
model is key when its span lies wholly inside one key span (the authors' ``cal_overlap``): a token that
straddles a span's edge is not. LongPPL is then the probed model's long-context perplexity on those
tokens. Self-evaluated (no evaluator), every key token has LCL > β, so LongPPL ≤ e^(−β) by construction.

The evaluator's passes are kept per book in ``OUT/evaluator/`` (``BOOK.npz`` and ``BOOK.json``, which says
what made them: the evaluator's weights and dtype, the book's text, the window, K, S and --max-tokens). A
later probe with the same evaluator, book and settings reads them instead of reading the book again —
from its own folder or from ``--evaluator-from`` folders.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from longread.files import atomic_write_bytes, atomic_write_text
from longread.models.identity import same_model
from longread.probes.errors import ProbeSettingsError

EVALUATOR_DIR = "evaluator"


@dataclass(frozen=True)
class EvaluatorPasses:
    """One book read by the evaluator: each of its tokens' character span and both log-probs (NaN where a
    pass scores nothing: the first K tokens)."""

    book: str
    starts: np.ndarray
    ends: np.ndarray
    lcl: np.ndarray
    short: np.ndarray
    made_by: dict[str, Any]

    def key(self, alpha: float, beta: float) -> np.ndarray:
        scored = ~np.isnan(self.lcl) & ~np.isnan(self.short)
        with np.errstate(invalid="ignore"):
            chosen: np.ndarray = scored & (self.lcl - self.short > alpha) & (self.lcl > beta)
        return chosen

    def key_spans(self, alpha: float, beta: float) -> list[tuple[int, int]]:
        """The key tokens' character spans, spans that touch merged (the authors' ``merge_intervals``)."""
        spans: list[tuple[int, int]] = []
        for start, end in zip(
            self.starts[self.key(alpha, beta)], self.ends[self.key(alpha, beta)], strict=True
        ):
            if spans and spans[-1][1] == int(start):
                spans[-1] = (spans[-1][0], int(end))
            else:
                spans.append((int(start), int(end)))
        return spans


def token_spans(encoder: Any, text: str, ids: Sequence[int], who: str) -> tuple[np.ndarray, np.ndarray]:
    """Each token's character span in ``text``, from a fast tokenizer whose ids are the encoder's."""
    tokenizer: Any = getattr(encoder, "tokenizer", None)
    if not getattr(tokenizer, "is_fast", False):
        raise ProbeSettingsError(
            f"{who}: key tokens are matched across tokenizers by character spans, which need a fast "
            "(Rust) tokenizer; this one is not"
        )
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    if list(encoded["input_ids"][: len(ids)]) != list(ids):
        raise ProbeSettingsError(f"{who}: the tokenizer's offsets do not follow the encoder's ids")
    spans = np.array(encoded["offset_mapping"][: len(ids)], dtype=np.int64).reshape(-1, 2)
    return spans[:, 0], spans[:, 1]


def inside(starts: np.ndarray, ends: np.ndarray, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """Which tokens (``starts``/``ends``) lie wholly inside one of ``spans`` (sorted, disjoint)."""
    if not spans:
        return np.zeros(len(starts), dtype=bool)
    lows = np.array([low for low, _ in spans])
    highs = np.array([high for _, high in spans])
    at = np.searchsorted(lows, starts, side="right") - 1
    found = at >= 0
    chosen: np.ndarray = found & (ends <= highs[np.clip(at, 0, None)]) & (ends > starts)
    return chosen


def made_by(evaluator: Any, book: str, text: str, settings: Any, window: int) -> dict[str, Any]:
    """What defines an evaluator's passes over one book (compared before they are reused)."""
    facts = evaluator.describe()
    return {
        "evaluator": {key: facts.get(key) for key in ("spec", "name", "weights_fingerprint", "dtype")},
        "book": book,
        "text_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "window": window,
        "short": settings.short,
        "stride": settings.stride,
        "max_tokens": settings.max_tokens,
    }


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    rest = [key for key in a if key != "evaluator"]
    return (
        same_model(a["evaluator"], b["evaluator"])
        and a["evaluator"].get("dtype") == b["evaluator"].get("dtype")
        and all(a.get(key) == b.get(key) for key in rest)
    )


def load_passes(folder: Path, book: str, wanted: dict[str, Any]) -> EvaluatorPasses | None:
    """The passes kept in ``folder/evaluator/`` for ``book`` when made as ``wanted``, else None."""
    meta_path, data_path = folder / EVALUATOR_DIR / f"{book}.json", folder / EVALUATOR_DIR / f"{book}.npz"
    if not meta_path.is_file() or not data_path.is_file():
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except ValueError:
        return None
    if not isinstance(meta, dict) or not _same(meta, wanted):
        return None
    with np.load(data_path) as data:
        return EvaluatorPasses(book, data["starts"], data["ends"], data["lcl"], data["short"], meta)


def save_passes(folder: Path, passes: EvaluatorPasses) -> None:
    target = folder / EVALUATOR_DIR
    target.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez(buffer, starts=passes.starts, ends=passes.ends, lcl=passes.lcl, short=passes.short)
    atomic_write_bytes(target / f"{passes.book}.npz", buffer.getvalue())
    atomic_write_text(target / f"{passes.book}.json", json.dumps(passes.made_by, indent=2) + "\n")


def evaluator_passes(
    evaluator: Any,
    book: str,
    text: str,
    settings: Any,
    out: Path,
    reuse: Sequence[Path] = (),
    progress: Any = None,
) -> tuple[EvaluatorPasses, Path | None]:
    """The evaluator's passes over one book, and the folder they were reused from (None: computed now);
    kept in ``out/evaluator/`` either way."""
    from longread.models.hf.token_logprobs import long_logprobs, short_logprobs

    model, encoder = getattr(evaluator, "model", None), getattr(evaluator, "encoder", None)
    if model is None or encoder is None:
        raise ProbeSettingsError(
            f"--evaluator {evaluator.name}: the evaluator's passes read every token's log-prob, which needs "
            "a local model (smollm2, gemma3, hf:FOLDER)"
        )
    start = encoder.start_token_id
    window = min(settings.window, evaluator.max_length - (1 if start is not None else 0))
    wanted = made_by(evaluator, book, text, settings, window)
    for folder in [out, *reuse]:
        found = load_passes(folder, book, wanted)
        if found is not None:
            if folder != out:
                (out / EVALUATOR_DIR).mkdir(parents=True, exist_ok=True)
                for suffix in (".npz", ".json"):
                    shutil.copyfile(
                        folder / EVALUATOR_DIR / f"{book}{suffix}", out / EVALUATOR_DIR / f"{book}{suffix}"
                    )
            return found, folder
    ids = encoder.encode_plain(text)
    if settings.max_tokens is not None:
        ids = ids[: settings.max_tokens]
    if len(ids) <= settings.short:
        raise ProbeSettingsError(
            f"{book}: {len(ids)} evaluator tokens, not more than --short ({settings.short})"
        )
    starts, ends = token_spans(encoder, text, ids, f"--evaluator {evaluator.name}")
    lcl, _ = long_logprobs(model, ids, window=window, start_token=start, progress=progress)
    short = short_logprobs(model, ids, short=settings.short, stride=settings.stride, start_token=start,
                           progress=progress)  # fmt: skip
    passes = EvaluatorPasses(
        book,
        starts,
        ends,
        np.array([np.nan if value is None else value for value in lcl], dtype=np.float64),
        np.array([np.nan if value is None else value for value in short], dtype=np.float64),
        wanted,
    )
    save_passes(out, passes)
    return passes, None


def evaluator_key_tokens(
    evaluator: Any,
    backend: Any,
    book: str,
    text: str,
    ids: Sequence[int],
    settings: Any,
    out: Path,
    reuse: Sequence[Path] = (),
    progress: Any = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Which of the probed model's scored tokens (``ids`` from ``settings.short`` on) lie inside the
    evaluator's key spans, and what the summary says of the evaluator."""
    passes, reused = evaluator_passes(evaluator, book, text, settings, out, reuse, progress)
    spans = passes.key_spans(settings.alpha, settings.beta)
    starts, ends = token_spans(backend.encoder, text, ids, backend.name)
    facts = {
        "spec": passes.made_by["evaluator"].get("spec"),
        "weights_fingerprint": passes.made_by["evaluator"].get("weights_fingerprint"),
        "evaluator_tokens": len(passes.lcl),
        "evaluator_key_tokens": int(np.sum(passes.key(settings.alpha, settings.beta))),
        "key_spans": len(spans),
        "reused_from": None if reused is None else str(reused),
    }
    return inside(starts[settings.short :], ends[settings.short :], spans), facts
