"""``longread probe tokens``: the per-token view of a book — which tokens need the long context?

After Fang et al. 2024 (*What is Wrong with Perplexity for Long-context Language Modeling?*, LongPPL):
each token of a book (after its first ``K``) is scored with a long context (up to ``W`` tokens: one
chunked read with the cache, a sliding window past ``W``) and with a short one (``K`` tokens, windows
advancing by ``S``; :mod:`longread.models.hf.token_logprobs`). Per token: the long-context log-prob
(LCL) and the short one in nats, LSD = LCL − short, *key* = LSD > α and LCL > β (α = 2, β = −2), the
distance to the token's last earlier occurrence, and whether its type is among the book's 10% most
frequent. Key tokens are the probed model's own (*self-evaluated*: every key token has LCL > β, so
LongPPL ≤ e^(−β) by construction, and the summary says so) or, with ``--evaluator``, an evaluator model's
mapped onto the probed model's tokens as LongPPL does (:mod:`longread.probes.key_tokens`). Per book:
perplexity, LongPPL (perplexity over key tokens), the key tokens' share, mean loss per context-length
bucket, and per category the long-pass loss, the short-pass loss and their difference (the LSD: what the
long context adds, apart from how easy a category is), with bootstrap intervals; a plot of loss against
context length, one line per category.

Files (written by :mod:`longread.probes.token_files`): ``tokens.parquet`` (one row per token),
``summary.json``, ``summary.md``, ``tokens.png``.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from longread.documents.book import Book
from longread.metrics.bootstrap import bootstrap_interval
from longread.probes.errors import ProbeSettingsError

FREQUENT_SHARE = 0.10
CATEGORIES = ("frequent", "infrequent", "seen within K", "seen beyond K", "never seen")


@dataclass(frozen=True)
class TokenProbeSettings:
    window: int = 4096
    short: int = 128
    stride: int = 64
    alpha: float = 2.0
    beta: float = -2.0
    max_tokens: int | None = None
    """Only the first N tokens of each book (recorded in the summary; None: the whole book)."""
    evaluator: str | None = None
    """The evaluator model's spec (key tokens chosen by it); None: self-evaluated."""

    def __post_init__(self) -> None:
        if self.short < 1 or self.short >= self.window:
            raise ProbeSettingsError(
                f"--short ({self.short}) must be at least 1 and below --window ({self.window}): the short "
                "context is the one the long context is compared with"
            )
        if not 1 <= self.stride <= self.short:
            raise ProbeSettingsError(f"--stride must lie in 1…{self.short} (--short), got {self.stride}")
        if self.max_tokens is not None and self.max_tokens <= self.short:
            raise ProbeSettingsError(
                f"--max-tokens must exceed --short ({self.short}), got {self.max_tokens}"
            )


@dataclass(frozen=True)
class BookTokens:
    book: str
    positions: np.ndarray
    token_ids: np.ndarray
    texts: list[str]
    lcl: np.ndarray
    short: np.ndarray
    long_context: np.ndarray
    last_seen: list[int | None]
    frequent: np.ndarray
    settings: TokenProbeSettings
    evaluator_key: np.ndarray | None = None
    """With an evaluator: which tokens lie inside its key spans (None: self-evaluated)."""
    evaluator_facts: dict[str, Any] | None = None

    @property
    def lsd(self) -> np.ndarray:
        difference: np.ndarray = self.lcl - self.short
        return difference

    @property
    def self_key(self) -> np.ndarray:
        """The probed model's own key tokens: its LSD > α and its LCL > β."""
        chosen: np.ndarray = (self.lsd > self.settings.alpha) & (self.lcl > self.settings.beta)
        return chosen

    @property
    def key(self) -> np.ndarray:
        """The key tokens LongPPL is computed on: the evaluator's where there is one, else the model's own."""
        return self.self_key if self.evaluator_key is None else self.evaluator_key

    def categories(self) -> dict[str, np.ndarray]:
        k = self.settings.short
        seen = np.array([d is not None for d in self.last_seen], dtype=bool)
        distance = np.array([d if d is not None else 0 for d in self.last_seen])
        return {
            "frequent": self.frequent,
            "infrequent": ~self.frequent,
            "seen within K": seen & (distance <= k),
            "seen beyond K": seen & (distance > k),
            "never seen": ~seen,
        }


def last_seen_distances(ids: Sequence[int]) -> list[int | None]:
    last: dict[int, int] = {}
    out: list[int | None] = []
    for position, token in enumerate(ids):
        before = last.get(token)
        out.append(None if before is None else position - before)
        last[token] = position
    return out


def frequent_types(ids: Sequence[int]) -> set[int]:
    counts = Counter(ids)
    ranked = sorted(counts, key=lambda token: (-counts[token], token))
    return set(ranked[: max(1, math.ceil(len(ranked) * FREQUENT_SHARE))])


def probe_book(
    backend: Any,
    book: Book,
    settings: TokenProbeSettings,
    progress: Any = None,
    evaluator: Any = None,
    out: Path | None = None,
    reuse: Sequence[Path] = (),
) -> tuple[BookTokens, dict[str, float]]:
    """Both passes over one book; the per-token table and the seconds each pass took. ``evaluator``: key
    tokens by that model's passes (kept in ``out``, reused from ``out`` or ``reuse`` where they match)."""
    from longread.models.hf.token_logprobs import long_logprobs, short_logprobs

    model = getattr(backend, "model", None)
    encoder = getattr(backend, "encoder", None)
    if model is None or encoder is None:
        raise ProbeSettingsError(
            f"{backend.name}: the token probe reads every token's log-prob from a local model (hf:, a "
            "bundled GGUF); a served model does not give them for a whole book"
        )
    text, _ = book.render()
    ids = encoder.encode_plain(text)
    if settings.max_tokens is not None:
        ids = ids[: settings.max_tokens]
    if len(ids) <= settings.short:
        raise ProbeSettingsError(f"{book.id}: {len(ids)} tokens, not more than --short ({settings.short})")
    start = encoder.start_token_id
    window = min(settings.window, backend.max_length - (1 if start is not None else 0))
    started = time.perf_counter()
    lcl, context = long_logprobs(model, ids, window=window, start_token=start, progress=progress)
    long_seconds = time.perf_counter() - started
    started = time.perf_counter()
    short = short_logprobs(model, ids, short=settings.short, stride=settings.stride, start_token=start,
                           progress=progress)  # fmt: skip
    short_seconds = time.perf_counter() - started
    scored = range(settings.short, len(ids))
    evaluator_key, facts, evaluator_seconds = None, None, 0.0
    if evaluator is not None:
        from longread.probes.key_tokens import evaluator_key_tokens

        started = time.perf_counter()
        evaluator_key, facts = evaluator_key_tokens(
            evaluator, backend, book.id, text, ids, settings, out or Path("."), reuse, progress
        )
        evaluator_seconds = time.perf_counter() - started
    seen = last_seen_distances(ids)
    common = frequent_types(ids)
    table = BookTokens(
        book=book.id,
        positions=np.array(list(scored)),
        token_ids=np.array([ids[p] for p in scored]),
        texts=[
            str(encoder.tokenizer.decode([ids[p]])) if hasattr(encoder, "tokenizer") else "" for p in scored
        ],
        lcl=np.array([lcl[p] for p in scored], dtype=np.float64),
        short=np.array([short[p] for p in scored], dtype=np.float64),
        long_context=np.array([context[p] for p in scored]),
        last_seen=[seen[p] for p in scored],
        frequent=np.array([ids[p] in common for p in scored], dtype=bool),
        settings=settings,
        evaluator_key=evaluator_key,
        evaluator_facts=facts,
    )
    costs = {
        "book_tokens": float(len(ids)),
        "long_seconds": long_seconds,
        "short_seconds": short_seconds,
        "short_tokens_per_book_token": (settings.short + (1 if start is not None else 0)) / settings.stride,
        "window": float(window),
        "evaluator_seconds": evaluator_seconds,
    }
    return table, costs


def _mean_with_interval(values: np.ndarray) -> dict[str, Any]:
    if values.size == 0:
        return {"n": 0, "mean": None, "ci_low": None, "ci_high": None}
    low, high = bootstrap_interval(values, lambda sample: float(np.mean(sample)), n_resamples=1000, seed=0)
    return {"n": int(values.size), "mean": float(np.mean(values)), "ci_low": low, "ci_high": high}


def _perplexity(lcl: np.ndarray) -> dict[str, Any]:
    if lcl.size == 0:
        return {"n": 0, "value": None, "ci_low": None, "ci_high": None}
    low, high = bootstrap_interval(lcl, lambda s: float(np.exp(-np.mean(s))), n_resamples=1000, seed=0)
    return {"n": int(lcl.size), "value": float(np.exp(-np.mean(lcl))), "ci_low": low, "ci_high": high}


def context_bucket(length: int) -> int:
    """The power of two at or below ``length`` (the bucket's lower edge)."""
    return 1 << max(0, int(length).bit_length() - 1)


def summarise(table: BookTokens) -> dict[str, Any]:
    loss = -table.lcl
    buckets: dict[str, Any] = {}
    for edge in sorted({context_bucket(n) for n in table.long_context}):
        chosen = np.array([context_bucket(n) == edge for n in table.long_context])
        buckets[str(edge)] = {
            "all": _mean_with_interval(loss[chosen]),
            **{name: _mean_with_interval(loss[chosen & mask]) for name, mask in table.categories().items()},
        }
    bound = math.exp(-table.settings.beta)
    return {
        "book": table.book,
        "tokens_scored": int(table.lcl.size),
        "perplexity": _perplexity(table.lcl),
        "long_ppl": _perplexity(table.lcl[table.key]),
        "key_tokens_by": "self" if table.evaluator_key is None else "evaluator",
        "evaluator": table.evaluator_facts,
        "self_long_ppl_bound": bound,
        "self_long_ppl": _perplexity(table.lcl[table.self_key]),
        "key_share": float(np.mean(table.key)),
        "key_tokens": int(np.sum(table.key)),
        "self_key_tokens": int(np.sum(table.self_key)),
        "mean_lsd": float(np.mean(table.lsd)),
        "lsd_by_category": {
            name: _mean_with_interval(table.lsd[mask]) for name, mask in table.categories().items()
        },
        "loss_by_category": {
            name: _mean_with_interval(loss[mask]) for name, mask in table.categories().items()
        },
        "short_loss_by_category": {
            name: _mean_with_interval(-table.short[mask]) for name, mask in table.categories().items()
        },
        "loss_by_context_bucket": buckets,
    }
