"""How often does each 95% interval longread prints hold the truth, and how often does its claim rule err?

    .venv/bin/python bench/interval_coverage.py [--replicates 1000] [--quick] [--out docs/data]

Simulated runs of known truth (:mod:`longread.metrics.simulation`) over a grid: 2, 3, 5, 10, 30 and 100
books; 1, 4, 20 or 50 instances a book, or unequal (1 to 50); base rates 0.1–0.9; true differences 0,
0.1 and 0.3; with and without book-to-book heterogeneity of the effect. For each interval a report
prints — the paired right/wrong difference, the paired continuous difference (margins, log-probs), a
share (accuracy) and a corpus-level metric (a ratio of sums, BLEU's shape) — the method used before this
measurement and the one chosen by it, side by side on the same replicates; and for the paired
differences the claim rule's two error rates: a false "effect" where the truth is 0, and a null whose
bound is smaller than the true difference. Writes ``interval_coverage.csv`` (every cell) and
``interval_coverage.png``, and prints the summary tables of docs/statistics.md. Before the grid it checks
that the vectorised methods give what :func:`longread.metrics.paired.paired_scores` gives.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import sys
import time
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from scipy.special import expit, logit

from longread.metrics import simulation as sim
from longread.metrics.claims import ALPHA, MIN_PAIRED, no_change_bound
from longread.metrics.paired import MIN_BOOKS, paired_scores

ROOT = Path(__file__).resolve().parents[1]
BOOKS = (2, 3, 5, 10, 30, 100)
PER_BOOK: tuple[int | str, ...] = (1, 4, 20, 50, "unequal")
BASES = (0.1, 0.3, 0.5, 0.7, 0.9)
DELTAS = (0.0, 0.1, 0.3)
TARGET = 0.94


def check_against_paired_scores(seed: int = 7) -> None:
    """The vectorised binary and continuous methods equal paired_scores on a few replicates."""
    rng = np.random.default_rng(seed)
    for books, per_book in ((5, 4), (10, "unequal"), (30, 1)):
        cell = sim.design(books, per_book)
        a, b = sim.binary_replicates(rng, cell, 5, 0.4, -0.1, True)
        fast = sim.hull(sim.cr2((b.astype(float) - a.astype(float)), cell), sim.tango(a, b))
        clusters = [f"book{c}" for c in cell.codes]
        for r in range(5):
            slow = paired_scores([bool(x) for x in a[r]], [bool(x) for x in b[r]], clusters=clusters)
            assert math.isclose(slow.ci_low, fast.low[r], abs_tol=1e-9), (slow, fast.low[r])
            assert math.isclose(slow.ci_high, fast.high[r], abs_tol=1e-9), (slow, fast.high[r])
        values = sim.continuous_replicates(rng, cell, 3, 0.1, True, False)
        fast_t = sim.cr2(values, cell)
        for r in range(3):
            slow = paired_scores([0.0] * cell.n, list(values[r]), clusters=clusters)
            assert math.isclose(slow.ci_low, fast_t.low[r], abs_tol=1e-9)


def claim_errors(
    intervals: sim.Intervals, truth: float, n: int, books: int, discordant: Any = None
) -> dict[str, float]:
    """The claim rule on every replicate: the share of false effects (truth 0) or of nulls whose bound is
    below the truth (truth ≠ 0). Below MIN_BOOKS books nothing is claimed (0 and 0)."""
    assert intervals.p is not None
    if books < MIN_BOOKS:
        return {
            "false_effect": 0.0 if truth == 0 else math.nan,
            "null_too_small": math.nan if truth == 0 else 0.0,
        }
    excludes = (intervals.low > 0) | (intervals.high < 0)
    significant = intervals.p < ALPHA
    effect = excludes & significant
    null = ~excludes & ~significant
    bound = np.maximum(np.abs(intervals.low), np.abs(intervals.high))
    if discordant is not None:
        bound = np.where(discordant == 0, np.maximum(bound, no_change_bound(n)), bound)
    if n < MIN_PAIRED:
        return {"false_effect": 0.0, "null_too_small": 0.0}
    if truth == 0:
        return {"false_effect": float(np.mean(effect)), "null_too_small": math.nan}
    return {"false_effect": math.nan, "null_too_small": float(np.mean(null & (bound < abs(truth) - 1e-12)))}


def binary_cells(replicates: int, quick: bool) -> Iterator[dict[str, Any]]:
    grid = itertools.product(BOOKS, PER_BOOK, BASES, DELTAS, (False, True))
    for books, per_book, base, size, hetero in grid:
        if quick and (base not in (0.3, 0.7) or books not in (3, 5, 10)):
            continue
        cell = sim.design(books, per_book)
        delta = sim.signed(base, size)
        truth = sim.binary_truth(base, delta, hetero)
        key = ("binary", books, str(per_book), base, size, hetero)
        if _skipped(key):
            continue
        rng = np.random.default_rng(_seed(key))
        a, b = sim.binary_replicates(rng, cell, replicates, base, delta, hetero)
        d = b.astype(float) - a.astype(float)
        tango, cr2 = sim.tango(a, b), sim.cr2(d, cell)
        now = sim.hull(cr2, tango)
        discordant = np.sum(a != b, axis=1)
        claimed = now if books >= MIN_BOOKS else tango
        row = {"cell": key, "kind": "paired right/wrong", "books": books, "per_book": per_book, "n": cell.n,
               "base": base,
               "difference": round(truth, 4), "heterogeneous": hetero,
               "before": float(np.mean(sim.covers(sim.percentile_bootstrap(d, cell), truth))),
               "cr2": float(np.mean(sim.covers(cr2, truth))),
               "tango": float(np.mean(sim.covers(tango, truth))),
               "now": float(np.mean(sim.covers(now if books >= MIN_BOOKS else tango, truth))),
               "hull": float(np.mean(sim.covers(now, truth))),
               **claim_errors(claimed, truth, cell.n, books, discordant)}  # fmt: skip
        yield row


def continuous_cells(
    replicates: int, quick: bool, skews: tuple[bool, ...] = (False,)
) -> Iterator[dict[str, Any]]:
    """Normal noise; the stress cells (:func:`continuous_stress_cells`) a centred exponential's skew."""
    for books, per_book, size, hetero, skewed in itertools.product(
        BOOKS, PER_BOOK, DELTAS, (False, True), skews
    ):
        if quick and books not in (3, 5, 10):
            continue
        cell = sim.design(books, per_book)
        key = ("continuous", books, str(per_book), size, hetero, skewed)
        if _skipped(key):
            continue
        rng = np.random.default_rng(_seed(key))
        values = sim.continuous_replicates(rng, cell, replicates, -size, hetero, skewed)
        cr2 = sim.cr2(values, cell)
        now = cr2 if books >= MIN_BOOKS or cell.n < 2 else sim.cr2(values, sim.design(cell.n, 1))
        kind = "paired continuous" + (" — stress" if skewed else "")
        yield {"cell": key, "kind": kind, "books": books, "per_book": per_book, "n": cell.n,
               "base": "skewed" if skewed else "normal", "difference": -size, "heterogeneous": hetero,
               "before": float(np.mean(sim.covers(sim.percentile_bootstrap(values, cell), -size))),
               "cr2": float(np.mean(sim.covers(cr2, -size))), "tango": math.nan,
               "now": float(np.mean(sim.covers(now, -size))), "hull": math.nan,
               **claim_errors(now, -size, cell.n, books)}  # fmt: skip


def continuous_stress_cells(replicates: int, quick: bool) -> Iterator[dict[str, Any]]:
    return continuous_cells(replicates, quick, (True,))


def share_cells(
    replicates: int, quick: bool, spreads: tuple[float, ...] = (0.0, 0.5)
) -> Iterator[dict[str, Any]]:
    """Accuracy over books: each book's own accuracy ``logit p_g = logit(base) + N(0, spread²)``."""
    for books, per_book, base, spread in itertools.product(BOOKS, PER_BOOK, BASES, spreads):
        if quick and (base not in (0.3, 0.9) or books not in (3, 5, 10)):
            continue
        cell = sim.design(books, per_book)
        key = ("share", books, str(per_book), base, spread)
        if _skipped(key):
            continue
        rng = np.random.default_rng(_seed(key))
        p = expit(logit(base) + spread * rng.standard_normal((replicates, cell.books)))
        truth_draw = expit(logit(base) + spread * np.random.default_rng(1).standard_normal(sim.TRUTH_BOOKS))
        truth = float(np.mean(truth_draw))
        right = rng.random((replicates, cell.n)) < p[:, cell.codes]
        wilson = sim.Intervals(*sim.wilson_intervals(right.sum(axis=1).astype(float), cell.n))
        now = sim.cluster_share(right, cell) if books >= MIN_BOOKS else wilson
        kind = "share (accuracy)" + (" — stress" if spread > 0.5 else "")
        yield {"cell": key, "kind": kind, "books": books,
               "per_book": per_book, "n": cell.n, "base": base, "difference": round(truth, 4),
               "heterogeneous": spread, "before": float(np.mean(sim.covers(wilson, truth))),
               "cr2": math.nan, "tango": math.nan, "now": float(np.mean(sim.covers(now, truth))),
               "hull": math.nan, "false_effect": math.nan, "null_too_small": math.nan}  # fmt: skip


def share_stress_cells(replicates: int, quick: bool) -> Iterator[dict[str, Any]]:
    """Books far apart (spread 1 on the logit scale: at base 0.9 books from 0.77 to 0.96)."""
    return share_cells(replicates, quick, (1.0,))


def ratio_cells(replicates: int, quick: bool) -> Iterator[dict[str, Any]]:
    for books, per_book, base, size, hetero in itertools.product(
        BOOKS, PER_BOOK, (0.2, 0.5, 0.8), DELTAS, (False, True)
    ):
        if quick and (base != 0.5 or books not in (3, 5, 10)):
            continue
        cell = sim.design(books, per_book)
        delta = sim.signed(base, size)
        truth = sim.ratio_truth(base, delta, hetero)
        key = ("ratio", books, str(per_book), base, size, hetero)
        if _skipped(key):
            continue
        rng = np.random.default_rng(_seed(key))
        lengths, hits_a, hits_b = sim.ratio_replicates(rng, cell, replicates, base, delta, hetero)
        jack = sim.ratio_jackknife(lengths, hits_a, hits_b, cell)
        single = sim.design(cell.n, 1)
        now = (
            jack if books >= MIN_BOOKS or cell.n < 2 else sim.ratio_jackknife(lengths, hits_a, hits_b, single)
        )
        before = sim.ratio_percentile_bootstrap(lengths, hits_a, hits_b, cell)
        yield {"cell": key, "kind": "corpus metric", "books": books, "per_book": per_book, "n": cell.n,
               "base": base,
               "difference": round(truth, 4), "heterogeneous": hetero,
               "before": float(np.mean(sim.covers(before, truth))),
               "cr2": float(np.mean(sim.covers(jack, truth))), "tango": math.nan,
               "now": float(np.mean(sim.covers(now, truth))), "hull": math.nan,
               **claim_errors(now, truth, cell.n, books)}  # fmt: skip


@dataclass
class Selection:
    """Which cells run (None: all) and the salt of their seeds: the confirmation stage re-measures the
    cells that fell short with fresh replicates (another salt)."""

    only: set[tuple[Any, ...]] | None = None
    salt: int = 0
    counted: list[tuple[Any, ...]] | None = None
    """Set while counting: the selected keys are listed and nothing is simulated."""


SELECTION = Selection()


def _skipped(key: tuple[Any, ...]) -> bool:
    chosen = SELECTION.only is None or key in SELECTION.only
    if SELECTION.counted is not None:
        if chosen:
            SELECTION.counted.append(key)
        return True
    return not chosen


def _seed(key: tuple[Any, ...]) -> int:
    """A replicable seed per cell (Python's own hash of a string changes from process to process)."""
    return zlib.crc32(repr((key, SELECTION.salt) if SELECTION.salt else key).encode())


FIELDS = ["kind", "books", "per_book", "n", "base", "difference", "heterogeneous", "before", "cr2", "tango",
          "hull", "now", "false_effect", "null_too_small", "confirmed_now", "confirmed_false_effect",
          "confirmed_null_too_small"]  # fmt: skip


def summary(rows: list[dict[str, Any]], replicates: int) -> str:
    """Per interval kind and number of books: the lowest and the mean coverage of each method, and the
    claim rule's worst error rates (the tables of docs/statistics.md)."""
    out = []
    mc_se = math.sqrt(0.95 * 0.05 / replicates)
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    for kind in kinds:
        here = [r for r in rows if r["kind"] == kind]
        out += [f"\n### {kind} ({len(here)} cells)\n",
                "| books | cells | before: lowest / mean | now: lowest / mean | cells below 94% now "
                f"(of them, below by more than 2 Monte Carlo SE, {2 * mc_se:.3f}) | "
                "false effects, worst cell | nulls below the truth, worst cell |",
                "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
        by_books: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for r in here:
            by_books[r["books"]].append(r)
        for books, cells in sorted(by_books.items()):
            before = [c["before"] for c in cells]
            now = [c["now"] for c in cells]
            fe = [c["false_effect"] for c in cells if not math.isnan(c["false_effect"])]
            nl = [c["null_too_small"] for c in cells if not math.isnan(c["null_too_small"])]
            scope = "" if books >= MIN_BOOKS else " (instance-level: no book-level claim)"
            worst_effect = f"{max(fe):.3f}" if fe else "—"
            worst_null = f"{max(nl):.3f}" if nl else "—"
            out.append(
                f"| {books}{scope} | {len(cells)} | {min(before):.3f} / {np.mean(before):.3f} | "
                f"{min(now):.3f} / {np.mean(now):.3f} | {sum(1 for v in now if v < TARGET)} "
                f"({sum(1 for v in now if v < TARGET - 2 * mc_se)}) | {worst_effect} | {worst_null} |"
            )
    return "\n".join(out)


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    figure = Figure(figsize=(4.2 * len(kinds), 3.8), dpi=130, layout="constrained")
    axes = figure.subplots(1, len(kinds), squeeze=False)[0]
    for axis, kind in zip(axes, kinds, strict=True):
        here = [r for r in rows if r["kind"] == kind]
        books = sorted({r["books"] for r in here})
        for method, colour, label in (("before", "tab:red", "before"), ("now", "tab:blue", "now")):
            lowest = [min(r[method] for r in here if r["books"] == b) for b in books]
            mean = [float(np.mean([r[method] for r in here if r["books"] == b])) for b in books]
            axis.plot(books, lowest, "o-", color=colour, label=f"{label}: lowest cell")
            axis.plot(books, mean, "o--", color=colour, alpha=0.5, label=f"{label}: mean of cells")
        axis.axhline(0.95, color="grey", linestyle=":", label="stated 95%")
        axis.axhline(TARGET, color="black", linewidth=0.8, label="target 94%")
        axis.axvspan(1.5, MIN_BOOKS - 0.5, color="grey", alpha=0.12, label="book level refused")
        axis.set_xscale("log")
        axis.set_xticks(books, [str(b) for b in books])
        axis.minorticks_off()
        axis.set_ylim(0.5, 1.0)
        axis.set_xlabel("books")
        axis.set_ylabel("coverage of the 95% interval")
        axis.set_title(kind)
        axis.legend(fontsize="x-small", loc="lower right")
    figure.savefig(path)


MAKERS: dict[str, Callable[[int, bool], Iterator[dict[str, Any]]]] = {
    "binary": binary_cells, "continuous": continuous_cells, "share": share_cells, "ratio": ratio_cells,
    "continuous-stress": continuous_stress_cells, "share-stress": share_stress_cells,
}  # fmt: skip


def run_grid(kinds: list[str], replicates: int, quick: bool, label: str) -> list[dict[str, Any]]:
    """Every selected cell of ``kinds``, with progress (cells done, rate, ETA) on stderr."""
    total = _count(kinds, quick)
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    for kind in kinds:
        for row in MAKERS[kind](replicates, quick):
            rows.append(row)
            if len(rows) % 25 == 0 or len(rows) == total:
                rate = len(rows) / (time.perf_counter() - start)
                eta = (total - len(rows)) / rate if rate else math.nan
                done = f"{label}: {len(rows)}/{total} cells, {rate:.2f} cells/s"
                print(f"{done}, ETA {eta / 60:.1f} min ({kind})", file=sys.stderr, flush=True)
    return rows


def _count(kinds: list[str], quick: bool) -> int:
    """How many cells ``kinds`` select (their keys only: nothing is simulated)."""
    SELECTION.counted = []
    try:
        for kind in kinds:
            for _ in MAKERS[kind](1, quick):
                pass
        return len(SELECTION.counted)
    finally:
        SELECTION.counted = None


def flagged(rows: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
    """Main-grid cells with five or more books that fell short of a target: coverage below 94%, false
    effects or nulls below the truth above 5%."""
    out = set()
    for r in rows:
        if r["books"] < MIN_BOOKS or "stress" in r["kind"]:
            continue
        short = r["now"] < TARGET
        errs = [r[k] for k in ("false_effect", "null_too_small") if not math.isnan(r[k])]
        if short or any(e > ALPHA for e in errs):
            out.add(r["cell"])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=2000)
    again = "fresh replicates for the cells that fell short (0: no confirmation stage)"
    parser.add_argument("--confirm", type=int, default=10000, help=again)
    parser.add_argument("--quick", action="store_true", help="a few cells (3, 5, 10 books)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "data")
    parser.add_argument("--kinds", default=",".join(MAKERS))
    parser.add_argument("--merge", action="store_true",
                        help="keep the rows of other kinds from the CSV already in --out")  # fmt: skip
    args = parser.parse_args(argv)
    check_against_paired_scores()
    kinds = args.kinds.split(",")
    start = time.perf_counter()
    rows = run_grid(kinds, args.replicates, args.quick, "grid")
    confirmed: dict[tuple[Any, ...], dict[str, Any]] = {}
    if args.confirm:
        SELECTION.only, SELECTION.salt = flagged(rows), 1
        confirmed = {r["cell"]: r for r in run_grid(kinds, args.confirm, args.quick, "confirmation")}
        SELECTION.only, SELECTION.salt = None, 0
    for row in rows:
        repeat = confirmed.get(row["cell"])
        row["confirmed_now"] = repeat["now"] if repeat else math.nan
        row["confirmed_false_effect"] = repeat["false_effect"] if repeat else math.nan
        row["confirmed_null_too_small"] = repeat["null_too_small"] if repeat else math.nan
    args.out.mkdir(parents=True, exist_ok=True)
    if args.merge:
        rows = _kept_rows(args.out / "interval_coverage.csv", {r["kind"] for r in rows}) + rows
    with (args.out / "interval_coverage.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, FIELDS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in row.items()})
    plot(rows, args.out / "interval_coverage.png")
    seconds = time.perf_counter() - start
    print(f"{args.replicates} replicates per cell, {len(rows)} cells; {len(confirmed)} cells that fell short "
          f"measured again with {args.confirm} fresh replicates; {seconds:.0f} s")  # fmt: skip
    print(summary(rows, args.replicates))
    print(confirmation(rows, args.confirm))
    return 0


def _kept_rows(path: Path, replaced: set[str]) -> list[dict[str, Any]]:
    """The rows of a CSV written before whose kind is not measured again (numbers read back)."""
    if not path.is_file():
        return []
    with path.open(encoding="utf-8") as handle:
        old = [row for row in csv.DictReader(handle) if row["kind"] not in replaced]

    def value(text: str) -> Any:
        try:
            number = float(text)
        except ValueError:
            return text
        return int(number) if text.isdigit() else number

    return [{key: value(text) for key, text in row.items()} for row in old]


def confirmation(rows: list[dict[str, Any]], replicates: int) -> str:
    """The cells measured again: their first and their confirmed figures."""
    again = [r for r in rows if not math.isnan(r["confirmed_now"])]
    if not again:
        return ""
    se = math.sqrt(0.95 * 0.05 / replicates)
    title = f"Cells that fell short, measured again ({replicates:,} fresh replicates; MC SE {se:.4f})"
    lines = [f"\n### {title}\n",
             "| kind | books | per book | base | difference | heterogeneous | coverage: first / again | "
             "false effects: first / again | nulls below the truth: first / again |",
             "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |"]  # fmt: skip

    def pair(a: float, b: float) -> str:
        return "—" if math.isnan(a) else f"{a:.3f} / {b:.3f}"

    for r in again:
        lines.append(
            f"| {r['kind']} | {r['books']} | {r['per_book']} | {r['base']} | {r['difference']} | "
            f"{r['heterogeneous']} | {pair(r['now'], r['confirmed_now'])} | "
            f"{pair(r['false_effect'], r['confirmed_false_effect'])} | "
            f"{pair(r['null_too_small'], r['confirmed_null_too_small'])} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
