"""``--target-effect D`` on ``ablate``, ``calibrate`` and ``presses``: before anything runs, what sample
would rule out a difference of ±D (the power analysis every eval should state: Miller 2024, *Adding Error
Bars to Evals*), from a pilot's numbers where the output folder holds a finished report, else from the
share of answers that change."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from longread.metrics.claims import pilot_instances, plan_for

TargetEffectOption = Annotated[
    float | None,
    typer.Option(
        "--target-effect",
        help="Before running, print the paired instances (and books) that would rule out a difference of "
        "±D: from the report a pilot left in --out, else for a range of shares of changed answers.",
        min=0.0,
    ),
]
DISCORDANCES = (0.05, 0.1, 0.2, 0.4)


def plan_text(report: Path, target: float, planned: int | None) -> str:
    """The plan as printed (see the module docstring)."""
    if target <= 0 or target >= 1:
        raise typer.BadParameter(f"--target-effect must lie between 0 and 1, got {target}")
    have = f"; this run plans {planned:,} instances" if planned else ""
    rows = _rows(report)
    if not rows:
        needs = ", ".join(f"{pilot_instances(target, d):,} if {d:.0%} change" for d in DISCORDANCES)
        return (
            f"Plan for ±{target:g}: no pilot in {report.parent} yet; paired right/wrong instances needed (no "
            f"true difference): {needs}{have}. A pilot (--sample 20) measures the share that changes."
        )
    plans = [plan_for(target, r.paired, r.low, r.high, r.books, r.by_book) for r in rows]
    instances = [p.instances for p in plans if p.instances is not None]
    books = [p.books for p in plans if p.books is not None]
    book_part = f" and about {max(books):,} books" if books else ""
    return (
        f"Plan for ±{target:g} from the pilot in {report.parent} ({len(rows)} comparisons, the widest "
        f"deciding): about {max(instances):,} paired instances{book_part} (median comparison "
        f"{sorted(instances)[len(instances) // 2]:,}){have}."
    )


@dataclass(frozen=True)
class _Pilot:
    paired: int
    low: float
    high: float
    books: int | None
    by_book: bool


def _rows(report: Path) -> list[_Pilot]:
    if not report.is_file():
        return []
    try:
        rows = json.loads(report.read_text(encoding="utf-8")).get("rows", [])
    except ValueError:
        return []
    out = []
    for r in rows:
        if not isinstance(r, dict) or not isinstance(r.get("paired"), int) or r["paired"] < 1:
            continue
        low, high, books = r.get("ci_low"), r.get("ci_high"), r.get("books")
        if not isinstance(low, int | float) or not isinstance(high, int | float):
            continue
        if math.isfinite(low) and math.isfinite(high):
            level = r.get("level", r.get("resampled"))
            out.append(_Pilot(r["paired"], float(low), float(high), books if isinstance(books, int) else None,
                              level == "books"))  # fmt: skip
    return out


def announce_plan(report: Path, target: float | None, planned: int | None) -> None:
    if target is not None:
        typer.echo(plan_text(report, target, planned))
