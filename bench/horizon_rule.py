"""How often is the used-context sentence of ``longread horizon`` wrong? Simulated campaigns of known truth.

    .venv/bin/python bench/horizon_rule.py [--replicates 1000] [--quick] [--out docs/data]

Each replicate is a whole search at L = 1,024 (grid 512 … 32, then 0; two bisection steps), made by
:mod:`longread.horizon.simulation` with the campaign's own search, intervals, Holm family and wording
rule. The grid: 20 instances of 5 books (the demo's size), 40 of 10, 120 of 30 and 200 of 40; answers
that use nothing before the end, that use something at most 128 tokens back, something 600 tokens back
(a step), or something log-uniformly 16–1,024 back; book-to-book spread of that share or none. Per cell:
how often the page claims an effect where the truth is 0, how often a bound it states is smaller than the
truth (both ≤ 5% asked of the rule), and what it said (the median used context and bound). Beside it, a
naive rule that reads "no change" where the point estimate lies within ±0.05, on the same searches: the
simulation finds its errors (the planted positive of this instrument).

Writes ``horizon_rule.csv`` and ``horizon_rule.png``; prints the table of docs/statistics.md.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from longread.horizon.simulation import Cell, Reach, loss_per_user, naive_errs, replicate, truth
from longread.metrics.simulation import design

ROOT = Path(__file__).resolve().parents[1]
REACHES = (
    Reach("none", 0.0, 0.3, 1, 1),
    Reach("near (≤128)", 0.3, 0.3, 1, 128),
    Reach("step (600)", 0.2, 0.3, 600, 600),
    Reach("gradual (16–1,024)", 0.3, 0.3, 16, 1024, log=True),
)
DESIGNS = ((5, 4), (10, 4), (30, 4), (40, 5))
BASE = 0.3
TARGET = 0.05


def run_cell(cell: Cell, replicates: int) -> dict[str, Any]:
    key = (cell.reach.name, cell.design.books, cell.design.n, cell.heterogeneous)
    rng = np.random.default_rng(zlib.crc32(repr(key).encode()))
    loss = loss_per_user(cell)
    outcomes = [replicate(rng, cell, loss) for _ in range(replicates)]
    used = [o.said.used for o in outcomes if o.said.used is not None]
    bounds = [o.said.bound for o in outcomes if o.said.bound is not None]
    return {
        "reach": cell.reach.name,
        "books": cell.design.books,
        "instances": cell.design.n,
        "heterogeneous": cell.heterogeneous,
        "replicates": replicates,
        "loss_all": round(loss, 4),
        "false_effect": float(np.mean([o.false_effect for o in outcomes])),
        "below_truth": float(np.mean([o.below_truth for o in outcomes])),
        "erred": float(np.mean([o.erred for o in outcomes])),
        "naive_erred": float(np.mean([naive_errs(cell, o, loss) for o in outcomes])),
        "no_used": sum(o.said.used is None for o in outcomes),
        "median_used": float(np.median(used)) if used else float("nan"),
        "median_bound": float(np.median(bounds)) if bounds else float("nan"),
        "within_delta": float(np.mean([o.said.delta_keep is not None for o in outcomes])),
        "used_values": used,
    }


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| answers use | books × per book | spread | wrong effect | bound below truth | any error | "
        "naive rule's errors | median used K | median bound | within ±0.05 |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['reach']} | {r['books']} × {r['instances'] // r['books']} | "
            f"{'yes' if r['heterogeneous'] else 'no'} | {r['false_effect']:.3f} | {r['below_truth']:.3f} | "
            f"{r['erred']:.3f} | {r['naive_erred']:.3f} | {r['median_used']:,.0f} | "
            f"±{r['median_bound']:.2f} | {r['within_delta']:.2f} |"
        )
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Per kind of answer: the true difference against K, and where the 120-instance pages put the used
    context."""
    figure = Figure(figsize=(11, 3.2), layout="constrained")
    axes = figure.subplots(1, len(REACHES), sharey=True)
    keeps = np.arange(0, 1025)
    for ax, reach in zip(axes, REACHES, strict=True):
        cell = Cell(design(30, 4), BASE, reach, True)
        loss = loss_per_user(cell)
        ax.plot(keeps, [truth(cell, int(k), loss) for k in keeps], color="black", label="true difference")
        ax.set_xscale("symlog", linthresh=32)
        ax.set_title(reach.name, fontsize=9)
        ax.set_xlabel("K (tokens kept)")
        twin = ax.twinx()
        here = next(r for r in rows if r["reach"] == reach.name and r["books"] == 30 and r["heterogeneous"])
        values, counts = np.unique(here["used_values"], return_counts=True)
        twin.bar(values, counts / here["replicates"], width=np.maximum(values * 0.15, 4), color="tab:blue",
                 alpha=0.5, label="used context said")  # fmt: skip
        twin.set_ylim(0, 1)
        twin.set_yticks([] if reach is not REACHES[-1] else [0, 0.5, 1])
    axes[0].set_ylabel("controlled − intact")
    axes[0].legend(fontsize=7, loc="lower right")
    figure.suptitle("Simulated horizon pages, 120 instances of 30 books: truth and the used context said",
                    fontsize=10)  # fmt: skip
    figure.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="200 replicates, no spread-free cells")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "data")
    args = parser.parse_args(argv)
    replicates = 200 if args.quick else args.replicates
    spreads = (True,) if args.quick else (True, False)
    cells = [Cell(design(b, k), BASE, reach, het) for reach, (b, k), het in
             itertools.product(REACHES, DESIGNS, spreads)]  # fmt: skip
    rows, start = [], time.perf_counter()
    for index, cell in enumerate(cells, 1):
        rows.append(run_cell(cell, replicates))
        rate = (time.perf_counter() - start) / index
        print(f"cell {index}/{len(cells)}: {rows[-1]['reach']}, {cell.design.n} instances; "
              f"ETA {rate * (len(cells) - index):.0f} s", file=sys.stderr, flush=True)  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    fields = [k for k in rows[0] if k != "used_values"]
    with (args.out / "horizon_rule.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, ROOT / "docs" / "img" / "horizon_rule.png")
    print(table(rows))
    worst = max(rows, key=lambda r: r["erred"])
    print(f"\nworst cell: {worst['reach']}, {worst['instances']} instances: {worst['erred']:.3f} "
          f"(target ≤ {TARGET}; MC SE ≈ {np.sqrt(TARGET * (1 - TARGET) / replicates):.3f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
