"""``longread probe compare A B``: two token probes of the same books, side by side with paired intervals.

Per probe folder (``longread probe tokens … --out``): the key tokens' share, LongPPL, perplexity and the
LSD (long − short log-prob) by category, over the books both probed; and B − A for each. The intervals are
a paired cluster bootstrap: books are drawn with replacement, the same books for both folders, each with
all its tokens (tokens of one book are not independent, and the two models read the same books). With a
single book the **merged spans** are resampled instead — the runs of consecutive tokens that are all key
tokens or all not (a key span is one unit however many tokens it has; its tokens are not independent) —
each folder's on its own, and the page says so.

Key tokens compare only when they were chosen the same way: both by the same evaluator (LongPPL as its
paper defines it) with the same weights, or both self-evaluated (each model its own, said beside the
numbers), and with the same α, β, short window, stride, window and max tokens; folders chosen otherwise
are refused, naming what differs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from longread.errors import BadInputError
from longread.files import atomic_write_text
from longread.probes.errors import ProbeSettingsError
from longread.probes.tokens import CATEGORIES

RESAMPLES = 2000
SEED = 0


@dataclass(frozen=True)
class TokenTable:
    """One probe folder's tokens, per book."""

    path: Path
    model: str
    key_by: str
    """``evaluator SPEC`` or ``self``."""
    books: dict[str, dict[str, np.ndarray]]
    selection: dict[str, Any] = field(default_factory=dict)
    """What chose the key tokens: α, β, short, stride, window, max tokens, the evaluator's weights."""


SELECTION = ("alpha", "beta", "short", "stride", "window", "max_tokens")


def load_tokens(folder: Path) -> TokenTable:
    import pyarrow.parquet as pq

    hint = "give the --out folder of `longread probe tokens`"
    summary_path, table_path = folder / "summary.json", folder / "tokens.parquet"
    if not summary_path.is_file() or not table_path.is_file():
        raise BadInputError(
            folder, "no summary.json and tokens.parquet here: not a token probe's folder", hint
        )
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise BadInputError(summary_path, f"not JSON ({exc})", hint) from None
    evaluator = (summary.get("settings") or {}).get("evaluator")
    columns = pq.read_table(table_path).to_pydict()
    if "self_key" not in columns:
        raise BadInputError(
            table_path, "made by an older longread (no self_key column)", "probe the books again"
        )
    short = int((summary.get("settings") or {}).get("short", 0))
    order = np.array(columns["book"])
    every = {
        "lcl": np.array(columns["lcl"], dtype=np.float64),
        "short": np.array(columns["short_logprob"], dtype=np.float64),
        "key": np.array(columns["key"], dtype=bool),
        "frequent": np.array(columns["frequent"], dtype=bool),
        "seen": np.array([-1 if d is None else d for d in columns["last_seen_distance"]]),
        "short_k": np.full(len(order), short),
        "position": np.array(columns["position"], dtype=np.int64)
        if "position" in columns
        else np.arange(len(order)),
    }
    books = {
        book: {name: values[order == book] for name, values in every.items()}
        for book in dict.fromkeys(columns["book"])
    }
    model = (summary.get("model") or {}).get("spec") or (summary.get("model") or {}).get("name") or "?"
    settings = summary.get("settings") or {}
    selection = {name: settings.get(name) for name in SELECTION}
    if evaluator:
        weights = {
            str((entry.get("evaluator") or {}).get("weights_fingerprint"))
            for entry in summary.get("books", [])
            if isinstance(entry, dict)
        }
        selection["evaluator weights"] = ", ".join(sorted(weights)) or None
    key_by = f"evaluator {evaluator}" if evaluator else "self"
    return TokenTable(folder, str(model), key_by, books, selection)


def refuse_unlike(a: TokenTable, b: TokenTable) -> None:
    """Key tokens chosen another way (evaluator, its weights, α, β, windows, stride, max tokens) make the
    two folders' LongPPL measure different things: refused, naming what differs."""
    if a.key_by != b.key_by:
        raise ProbeSettingsError(
            f"{a.path} chose key tokens by {a.key_by}, {b.path} by {b.key_by}: key tokens compare only when "
            "chosen the same way; probe both with the same --evaluator"
        )
    differ = [
        f"{name} {a.selection.get(name)!r} against {b.selection.get(name)!r}"
        for name in dict.fromkeys([*a.selection, *b.selection])
        if a.selection.get(name) != b.selection.get(name)
    ]
    if differ:
        raise ProbeSettingsError(
            f"{a.path} and {b.path} chose their key tokens differently ({'; '.join(differ)}): their LongPPL "
            "and key shares would measure different things; probe both with the same settings"
        )


def spans(book: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The merged spans of one book's tokens: runs of consecutive positions all key or all not."""
    key, position = book["key"], book["position"]
    breaks = np.flatnonzero((key[1:] != key[:-1]) | (np.diff(position) != 1)) + 1
    return np.split(np.arange(len(key)), breaks)


def _categories(book: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    seen, k = book["seen"], book["short_k"]
    return {
        "frequent": book["frequent"],
        "infrequent": ~book["frequent"],
        "seen within K": (seen >= 0) & (seen <= k),
        "seen beyond K": seen > k,
        "never seen": seen < 0,
    }


def statistics(parts: list[dict[str, np.ndarray]]) -> dict[str, float]:
    """Key share, LongPPL, perplexity and mean LSD by category over the tokens of ``parts``."""
    lcl = np.concatenate([part["lcl"] for part in parts])
    short = np.concatenate([part["short"] for part in parts])
    key = np.concatenate([part["key"] for part in parts])
    out = {
        "key_share": float(np.mean(key)),
        "long_ppl": float(np.exp(-np.mean(lcl[key]))) if key.any() else math.nan,
        "perplexity": float(np.exp(-np.mean(lcl))),
    }
    masks = [_categories(part) for part in parts]
    for name in CATEGORIES:
        mask = np.concatenate([m[name] for m in masks])
        out[f"lsd: {name}"] = float(np.mean(lcl[mask] - short[mask])) if mask.any() else math.nan
    return out


def _resample(
    a: TokenTable,
    b: TokenTable,
    books: list[str],
    estimate: Callable[[list[dict[str, np.ndarray]]], dict[str, float]],
) -> list[tuple[dict[str, float], dict[str, float]]]:
    rng = np.random.default_rng(SEED)
    draws = []
    units_a = spans(a.books[books[0]]) if len(books) == 1 else []
    units_b = spans(b.books[books[0]]) if len(books) == 1 else []
    for _ in range(RESAMPLES):
        if len(books) >= 2:
            picks = [books[i] for i in rng.integers(0, len(books), size=len(books))]
            draws.append((estimate([a.books[p] for p in picks]), estimate([b.books[p] for p in picks])))
        else:
            sides = []
            for units, book in ((units_a, a.books[books[0]]), (units_b, b.books[books[0]])):
                index = np.concatenate([units[i] for i in rng.integers(0, len(units), size=len(units))])
                sides.append(estimate([{name: values[index] for name, values in book.items()}]))
            draws.append((sides[0], sides[1]))
    return draws


def compare(a: TokenTable, b: TokenTable) -> dict[str, Any]:
    """A's and B's statistics, B − A, each with a 95% interval (module docstring)."""
    refuse_unlike(a, b)
    books = sorted(set(a.books) & set(b.books))
    if not books:
        raise ProbeSettingsError(f"{a.path} and {b.path} probed no book in common")
    only = sorted(set(a.books) ^ set(b.books))
    point_a = statistics([a.books[book] for book in books])
    point_b = statistics([b.books[book] for book in books])
    draws = _resample(a, b, books, statistics)
    rows = []
    for name in point_a:

        def interval(values: list[float]) -> tuple[float | None, float | None]:
            finite = [v for v in values if math.isfinite(v)]
            if not finite:
                return None, None
            low, high = np.percentile(finite, [2.5, 97.5])
            return float(low), float(high)

        rows.append(
            {
                "statistic": name,
                "a": point_a[name],
                "a_ci": interval([d[0][name] for d in draws]),
                "b": point_b[name],
                "b_ci": interval([d[1][name] for d in draws]),
                "difference": point_b[name] - point_a[name],
                "difference_ci": interval([d[1][name] - d[0][name] for d in draws]),
            }
        )
    return {
        "a": {"path": str(a.path), "model": a.model},
        "b": {"path": str(b.path), "model": b.model},
        "key_tokens_by": a.key_by,
        "books": books,
        "books_in_one_only": only,
        "resampled": "books (paired: the same books for both)"
        if len(books) >= 2
        else "merged spans (one book: runs of key or of other tokens, each folder's own)",
        "rows": rows,
    }


def write_compare(result: dict[str, Any], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "compare.json", json.dumps(result, indent=2) + "\n")

    def cell(value: float, ci: tuple[float | None, float | None], signed: bool = False) -> str:
        form = "+.3f" if signed else ".3f"
        if not math.isfinite(value):
            return "—"
        interval = "" if ci[0] is None else f" [{ci[0]:{form}}, {ci[1]:{form}}]"
        return f"{value:{form}}{interval}"

    a, b = result["a"]["model"], result["b"]["model"]
    lines = [
        f"# {b} against {a}: which tokens need the long context?",
        "",
        f"Key tokens by {result['key_tokens_by']}; {len(result['books'])} book(s) both probed "
        f"({', '.join(result['books'])}); 95% intervals resample {result['resampled']}, {RESAMPLES} times "
        f"(seed {SEED})."
        + (
            f" Probed by one only, left out: {', '.join(result['books_in_one_only'])}."
            if result["books_in_one_only"]
            else ""
        ),
        "",
        f"| statistic | A: {a} | B: {b} | B − A [95% CI] |",
        "| --- | ---: | ---: | ---: |",
    ]
    for row in result["rows"]:
        lines.append(
            f"| {row['statistic']} | {cell(row['a'], row['a_ci'])} | {cell(row['b'], row['b_ci'])} | "
            f"{cell(row['difference'], row['difference_ci'], signed=True)} |"
        )
    markdown = out / "compare.md"
    atomic_write_text(markdown, "\n".join(lines) + "\n")
    return markdown
