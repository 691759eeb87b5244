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

Files: ``tokens.parquet`` (one row per token), ``summary.json``, ``summary.md``, ``tokens.png``.
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from longread.documents.book import Book
from longread.files import atomic_save_png, atomic_write_text
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


def write_tokens(tables: Sequence[BookTokens], out: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns: dict[str, list[Any]] = {name: [] for name in (
        "book", "position", "token_id", "text", "lcl", "short_logprob", "lsd", "key", "self_key",
        "last_seen_distance", "frequent", "long_context")}  # fmt: skip
    for table in tables:
        columns["book"] += [table.book] * table.lcl.size
        columns["position"] += table.positions.tolist()
        columns["token_id"] += table.token_ids.tolist()
        columns["text"] += table.texts
        columns["lcl"] += table.lcl.tolist()
        columns["short_logprob"] += table.short.tolist()
        columns["lsd"] += table.lsd.tolist()
        columns["key"] += table.key.tolist()
        columns["self_key"] += table.self_key.tolist()
        columns["last_seen_distance"] += table.last_seen
        columns["frequent"] += table.frequent.tolist()
        columns["long_context"] += table.long_context.tolist()
    path = out / "tokens.parquet"
    partial = path.with_name(".tokens.parquet.tmp")
    pq.write_table(pa.table(columns), partial)
    partial.replace(path)
    return path


def plot_tokens(summaries: Sequence[dict[str, Any]], path: Path) -> Path:
    figure = Figure(figsize=(6.0 * len(summaries), 4.2), dpi=130, layout="constrained")
    for index, summary in enumerate(summaries):
        axes = figure.add_subplot(1, len(summaries), index + 1)
        buckets = summary["loss_by_context_bucket"]
        edges = sorted(buckets, key=int)
        for name in ("all", *CATEGORIES):
            points = [(int(e), buckets[e][name]) for e in edges if buckets[e][name]["n"] >= 5]
            if not points:
                continue
            xs = [x for x, _ in points]
            ys = [p["mean"] for _, p in points]
            lows = [p["mean"] - p["ci_low"] for _, p in points]
            highs = [p["ci_high"] - p["mean"] for _, p in points]
            axes.errorbar(xs, ys, yerr=[lows, highs], marker="o", capsize=2, label=name,
                          linewidth=2.2 if name == "all" else 1.2)  # fmt: skip
        axes.set_xscale("log", base=2)
        axes.set_xlabel("long context (tokens, bucket's lower edge)")
        axes.set_ylabel("loss (nats / token)")
        axes.set_title(f"{summary['book']}: LongPPL {summary['long_ppl']['value'] or float('nan'):.2f}, "
                       f"PPL {summary['perplexity']['value']:.2f}")  # fmt: skip
        axes.legend(fontsize="small")
    return atomic_save_png(figure, path)


def _interval(score: dict[str, Any], signed: bool = False) -> str:
    if not score["n"]:
        return "—"
    form = "+.3f" if signed else ".3f"
    return f"{score['mean']:{form}} [{score['ci_low']:{form}}, {score['ci_high']:{form}}]"


def _book_lines(
    summaries: Sequence[dict[str, Any]], settings: TokenProbeSettings, model: dict[str, str]
) -> list[str]:
    """The page's head: who chose the key tokens (the self-evaluated bound stated) and a row per book."""
    bound = math.exp(-settings.beta)
    chosen_by = (
        f"chosen by the evaluator {settings.evaluator} (its LSD > {settings.alpha} and its LCL > "
        f"{settings.beta}, mapped onto this model's tokens by character spans, as LongPPL does)"
        if settings.evaluator
        else f"chosen by the model itself (its LSD > {settings.alpha} and LCL > {settings.beta}): "
        f"self-evaluated, so LongPPL ≤ e^{-settings.beta:g} ≈ {bound:.2f} by construction — a selection "
        "effect, not a finding; give --evaluator for LongPPL as its paper defines it"
    )
    lines = [
        f"# Which tokens need the long context? — {model.get('name', '?')}",
        "",
        f"Key tokens {chosen_by} (LongPPL, Fang et al. 2024).",
        "",
        "| book | tokens | perplexity [95% CI] | LongPPL [95% CI] | key tokens | key tokens by |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for s in summaries:
        ppl, lppl = s["perplexity"], s["long_ppl"]
        lppl_text = (
            "—"
            if lppl["value"] is None
            else f"{lppl['value']:.2f} [{lppl['ci_low']:.2f}, {lppl['ci_high']:.2f}]"
        )
        lines.append(
            f"| {s['book']} | {s['tokens_scored']:,} | "
            f"{ppl['value']:.2f} [{ppl['ci_low']:.2f}, {ppl['ci_high']:.2f}] | {lppl_text} | "
            f"{s['key_tokens']:,} ({100 * s['key_share']:.1f}%) | {s['key_tokens_by']} |"
        )
    return lines


def _category_lines(summaries: Sequence[dict[str, Any]]) -> list[str]:
    """Per book and category: the long-context loss, the short-context loss and the LSD."""
    lines = [
        "",
        "Loss by category (nats/token, mean [95% CI], n tokens): with the long context, with the short one, "
        "and what the long context adds (LSD = long log-prob − short log-prob). Tokens seen before are "
        "easier with either context; the LSD says what the long context itself helps.",
        "",
        "| book | category | n | long-context loss | short-context loss | LSD [95% CI] |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for s in summaries:
        for name in CATEGORIES:
            long, short, lsd = (
                s["loss_by_category"][name],
                s["short_loss_by_category"][name],
                s["lsd_by_category"][name],
            )
            lines.append(
                f"| {s['book']} | {name} | {lsd['n']:,} | {_interval(long)} | {_interval(short)} | "
                f"{_interval(lsd, signed=True)} |"
            )
    return lines


def write_summary(
    summaries: Sequence[dict[str, Any]],
    settings: TokenProbeSettings,
    costs: Sequence[dict[str, float]],
    model: dict[str, str],
    out: Path,
) -> tuple[Path, Path]:
    payload = {
        "settings": settings.__dict__,
        "model": model,
        "books": list(summaries),
        "costs": [{"book": s["book"], **cost} for s, cost in zip(summaries, costs, strict=True)],
        "notes": [
            f"long: up to {settings.window} tokens of context, one chunked read with the cache; past the "
            "window a sliding window (the last half read again), so each token sees between W/2 and W tokens",
            f"short: windows of {settings.short} tokens advancing by {settings.stride}; each token sees "
            f"between {settings.short - settings.stride + 1} and {settings.short} tokens",
            *(
                [f"only the first {settings.max_tokens} tokens of each book (--max-tokens)"]
                if settings.max_tokens
                else []
            ),
        ],
    }
    js = out / "summary.json"
    atomic_write_text(js, json.dumps(payload, indent=2, sort_keys=True) + "\n")
    lines = _book_lines(summaries, settings, model) + _category_lines(summaries)
    lines += [
        "",
        *(f"- {note}" for note in payload["notes"]),
        "",
        "![loss against context length](tokens.png)",
        "",
    ]
    md = out / "summary.md"
    atomic_write_text(md, "\n".join(lines))
    return js, md
