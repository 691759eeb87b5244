"""Coverage of the memory split's interval (``longread report --memory``): remembered − not remembered,
two independent groups of books.

Each run draws, per side, B books with 1–20 right/wrong answers each, every book's rate logit-normal
around its side's (spread σ), and asks whether the difference's 95% interval
(:func:`longread.report.memory_split.welch_interval` on each side's CR2 interval) holds the true
difference (the two sides' expected rates, by Monte Carlo). Prints one line per cell; the table in
docs/statistics.md is its output with ``--runs 10000`` (seed 0; about 4 minutes).

    python bench/memory_split_coverage.py [--runs 1000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from longread.report.memory_split import side_interval, welch_interval

CELLS = [(5, 0.4, 0.4, 0.0), (5, 0.4, 0.4, 1.0), (5, 0.6, 0.3, 1.0), (5, 0.2, 0.1, 0.5), (5, 0.8, 0.5, 1.5),
         (10, 0.5, 0.3, 1.0), (30, 0.4, 0.3, 1.0)]  # fmt: skip
"""(books a side, rate of one side, rate of the other, spread σ of the books' logits)."""


def mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def expected_rate(rate: float, spread: float, rng: np.random.Generator) -> float:
    """E[rate] when a book's logit is logit(rate) + N(0, σ²)."""
    draws = rng.normal(0.0, spread, 2_000_000)
    return float(np.mean(1 / (1 + np.exp(-(np.log(rate / (1 - rate)) + draws)))))


def coverage(books: int, rates: tuple[float, float], spread: float, runs: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    truth = expected_rate(rates[0], spread, rng) - expected_rate(rates[1], spread, rng)
    held = 0
    for _ in range(runs):
        sides = []
        for rate in rates:
            logits = np.log(rate / (1 - rate)) + rng.normal(0.0, spread, books)
            sizes = rng.integers(1, 21, books)
            chances = 1 / (1 + np.exp(-logits))
            sides.append(
                {f"b{g}": [float(v) for v in rng.random(sizes[g]) < chances[g]] for g in range(books)}
            )
        a, b = (side_interval(side, mean, corpus=False) for side in sides)
        assert a is not None and b is not None
        flat = [[v for values in side.values() for v in values] for side in sides]
        low, high = welch_interval(float(np.mean(flat[0]) - np.mean(flat[1])), a, b)
        held += low <= truth <= high
    return held / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.monotonic()
    print("books | rates | spread | coverage")
    for index, (books, a, b, spread) in enumerate(CELLS, start=1):
        held = coverage(books, (a, b), spread, args.runs, args.seed)
        elapsed = time.monotonic() - started
        eta = elapsed / index * (len(CELLS) - index)
        progress = f"({index}/{len(CELLS)}, {elapsed:.0f} s, ETA {eta:.0f} s)"
        print(f"{books} | {a}, {b} | {spread} | {held:.3f}   {progress}", flush=True)


if __name__ == "__main__":
    main()
