"""How often is the used-context sentence of ``longread horizon`` wrong? Simulated campaigns of known truth.

    .venv/bin/python bench/horizon_rule.py [--replicates 1000] [--quick] [--search zero-first]
        [--out docs/data]

Each replicate is a whole search at L = 1,024 or 2,048 (grid L/2 … 32, then 0; two bisection steps),
made by :mod:`longread.horizon.simulation` with the campaign's own search, intervals, Holm family and
used-context rule. The grid: 20 instances of 5 books (the demo's size), 120 of 30, 200 of 40 and 400 of
40; answers that use nothing before the end, something at most 128 tokens back, something 600 tokens back
(a step), or something log-uniformly 16 tokens to L back; the share that uses it spread from book to book.
Per cell, each error the page can make, measured apart (each asked ≤ 5%): an effect where the truth is 0
or of the other sign; a bound it states smaller than the truth; the interval it prints for the next K
below (simultaneous over the K tried) missing the truth — and beside it the plain 95% interval of that
picked K, which misses far more often. Also what it said (the median used context and bound). Beside it,
a naive rule that reads "no change" where the point estimate lies within ±0.05, on the same searches:
the simulation finds its errors (the planted positive of this instrument).

With ``--search zero-first`` the searches try K = 0 first (``longread horizon --search zero-first``) and
the files are ``horizon_rule_zero_first.csv``/``.png``; the table also counts the runs a search took.

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
LENGTHS = (1024, 2048)


def reaches(length: int) -> tuple[Reach, ...]:
    return (
        Reach("none", 0.0, 0.3, 1, 1),
        Reach("near (≤128)", 0.3, 0.3, 1, 128),
        Reach("step (600)", 0.2, 0.3, 600, 600),
        Reach("gradual (16–L)", 0.3, 0.3, 16, length, log=True),
    )


DESIGNS = ((5, 4), (30, 4), (40, 5), (40, 10))
BASE = 0.3
TARGET = 0.05


def _share(values: list[bool | None]) -> float:
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else float("nan")


def run_cell(cell: Cell, replicates: int) -> dict[str, Any]:
    key = (cell.reach.name, cell.design.books, cell.design.n, cell.heterogeneous, cell.length)
    rng = np.random.default_rng(zlib.crc32(repr(key).encode()))
    loss = loss_per_user(cell)
    outcomes = [replicate(rng, cell, loss) for _ in range(replicates)]
    used = [o.said.used for o in outcomes if o.said.used is not None]
    bounds = [o.said.bound for o in outcomes if o.said.bound is not None]
    return {
        "length": cell.length,
        "reach": cell.reach.name,
        "books": cell.design.books,
        "instances": cell.design.n,
        "heterogeneous": cell.heterogeneous,
        "replicates": replicates,
        "loss_all": round(loss, 4),
        "false_effect": float(np.mean([o.false_effect for o in outcomes])),
        "below_truth": float(np.mean([o.below_truth for o in outcomes])),
        "picked_pages": sum(o.picked_missed is not None for o in outcomes),
        "picked_missed": _share([o.picked_missed for o in outcomes]),
        "picked_missed_plain": _share([o.picked_missed_plain for o in outcomes]),
        "erred": float(np.mean([o.erred for o in outcomes])),
        "naive_erred": float(np.mean([naive_errs(cell, o, loss) for o in outcomes])),
        "no_used": sum(o.said.used is None for o in outcomes),
        "median_used": float(np.median(used)) if used else float("nan"),
        "median_bound": float(np.median(bounds)) if bounds else float("nan"),
        "within_delta": float(np.mean([o.said.delta_keep is not None for o in outcomes])),
        "runs": float(np.mean([o.runs for o in outcomes])),
        "other_runs": float(np.mean([o.other_runs for o in outcomes])),
        "used_values": used,
    }


def false_coverage(row: dict[str, Any], column: str) -> float:
    """The share of all pages whose printed interval for the picked K misses the truth: Benjamini and
    Yekutieli's false coverage-statement rate (a page prints at most one), from the share among the pages
    that print one."""
    share = float(row[column])
    picked = int(row["picked_pages"])
    return 0.0 if picked == 0 else share * picked / int(row["replicates"])


def table(rows: list[dict[str, Any]], other: str = "zero-first") -> str:
    """The docs' table; with the runs columns where the CSV has them (``other``: the other search order,
    whose runs on the same campaigns are in brackets)."""
    runs = "runs" in rows[0]
    lines = [
        "| L | answers use | books × per book | wrong effect | bound below truth | picked K's interval "
        "misses (plain 95%) | any error | naive rule | median used K | median bound | within ±0.05 |"
        + (f" K runs ({other}) |" if runs else ""),
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if runs else ""),
    ]
    for r in rows:
        per_book = int(r["instances"]) // int(r["books"])
        lines.append(
            f"| {int(r['length']):,} | {r['reach']} | {r['books']} × {per_book} | "
            f"{float(r['false_effect']):.3f} | {float(r['below_truth']):.3f} | "
            f"{false_coverage(r, 'picked_missed'):.3f} ({false_coverage(r, 'picked_missed_plain'):.3f}) | "
            f"{float(r['erred']):.3f} | {float(r['naive_erred']):.3f} | {float(r['median_used']):,.0f} | "
            f"±{float(r['median_bound']):.2f} | {float(r['within_delta']):.2f} |"
            + (f" {float(r['runs']):.1f} ({float(r['other_runs']):.1f}) |" if runs else "")
        )
    return "\n".join(lines)


def worst(rows: list[dict[str, Any]]) -> str:
    """Each error's worst cell."""
    rates: dict[str, Any] = {
        "wrong effect": lambda r: float(r["false_effect"]),
        "bound below truth": lambda r: float(r["below_truth"]),
        "picked K's interval misses": lambda r: false_coverage(r, "picked_missed"),
        "any error": lambda r: float(r["erred"]),
    }
    lines = []
    for name, rate in rates.items():
        top = max(rows, key=rate)
        lines.append(f"worst {name}: {rate(top):.3f} (L = {top['length']}, {top['reach']}, "
                     f"{top['instances']} instances)")  # fmt: skip
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], path: Path, order: str = "") -> None:
    """Per kind of answer: the true difference against K, and where the 120-instance pages at L = 1,024
    put the used context."""
    figure = Figure(figsize=(11, 3.2), layout="constrained")
    kinds = reaches(1024)
    axes = figure.subplots(1, len(kinds), sharey=True)
    keeps = np.arange(0, 1025)
    for ax, reach in zip(axes, kinds, strict=True):
        cell = Cell(design(30, 4), BASE, reach, True)
        loss = loss_per_user(cell)
        ax.plot(keeps, [truth(cell, int(k), loss) for k in keeps], color="black", label="true difference")
        ax.set_xscale("symlog", linthresh=32)
        ax.set_title(reach.name.replace("L", "1,024"), fontsize=9)
        ax.set_xlabel("K (tokens kept)")
        twin = ax.twinx()
        here = next(
            r for r in rows
            if r["reach"] == reach.name and r["books"] == 30 and r["heterogeneous"] and r["length"] == 1024
        )  # fmt: skip
        values, counts = np.unique(here["used_values"], return_counts=True)
        twin.bar(values, counts / here["replicates"], width=np.maximum(values * 0.15, 4), color="tab:blue",
                 alpha=0.5, label="used context said")  # fmt: skip
        twin.set_ylim(0, 1)
        last = reach is kinds[-1]
        twin.set_yticks([0, 0.5, 1] if last else [])
        if last:
            twin.set_ylabel("share of pages saying K")
    axes[0].set_ylabel("controlled − intact")
    axes[0].legend(fontsize=7, loc="lower right")
    figure.suptitle("Simulated horizon pages, 120 instances of 30 books, L = 1,024: truth and the used "
                    f"context said{order}", fontsize=10)  # fmt: skip
    figure.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="200 replicates, L = 1,024 only")
    parser.add_argument("--search", choices=("descend", "zero-first"), default="descend")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "data")
    parser.add_argument("--table", type=Path, help="print the tables of a written horizon_rule.csv and exit")
    args = parser.parse_args(argv)
    if args.table is not None:
        with args.table.open() as handle:
            written = list(csv.DictReader(handle))
        other = "descend" if "zero_first" in args.table.name else "zero-first"
        print(table(written, other) + "\n\n" + worst(written))
        return 0
    replicates = 200 if args.quick else args.replicates
    lengths = LENGTHS[:1] if args.quick else LENGTHS
    zero_first = args.search == "zero-first"
    cells = [Cell(design(b, k), BASE, reach, True, length=length, zero_first=zero_first) for length in lengths
             for reach, (b, k) in itertools.product(reaches(length), DESIGNS)]  # fmt: skip
    rows, start = [], time.perf_counter()
    for index, cell in enumerate(cells, 1):
        rows.append(run_cell(cell, replicates))
        rate = (time.perf_counter() - start) / index
        print(f"cell {index}/{len(cells)}: L = {cell.length}, {rows[-1]['reach']}, {cell.design.n} "
              f"instances; ETA {rate * (len(cells) - index):.0f} s", file=sys.stderr, flush=True)  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    fields = [k for k in rows[0] if k != "used_values"]
    name = "horizon_rule_zero_first" if zero_first else "horizon_rule"
    with (args.out / f"{name}.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    where = args.out.parent / "img" if args.out.name == "data" else args.out
    plot(rows, where / f"{name}.png", " (K = 0 tried first)" if zero_first else "")
    print(table(rows, "descend" if zero_first else "zero-first") + "\n\n" + worst(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
