"""The files of a token probe: ``tokens.parquet``, ``tokens.png``, ``summary.json`` and ``summary.md``."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from longread.files import atomic_save_png, atomic_write_text
from longread.probes.tokens import CATEGORIES, BookTokens, TokenProbeSettings


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
