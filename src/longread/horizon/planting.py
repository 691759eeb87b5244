"""The planted copies of a horizon campaign: the planted data, where its copies lie, and which distance
the calibration gate reads.

Which instances can hold a copy, and how it is planted, is the benchmark adapter's
(:mod:`longread.horizon.tasks`). Each model plants every chosen instance it can (so its planted data, and
the runs reading it, stay the same however the common instances change on a resume); the comparisons
use only the instances every model fitted and every model could plant.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from longread.calibration.verdicts import Placement, copy_shown, position_of
from longread.horizon import layout
from longread.horizon.plan import HorizonPlan
from longread.horizon.tasks import HorizonTask
from longread.metrics.claims import MIN_PAIRED
from longread.metrics.paired import PairedScores
from longread.text.planting import Count


def plant(
    out: Path,
    model: str,
    length: int,
    task: HorizonTask,
    instances: Sequence[Any],
    ids: frozenset[str],
    count: Count,
    plan: HorizonPlan,
) -> dict[int, Placement]:
    """Write the model's planted data at every distance of L; where each distance's copies lie."""
    chosen = [i for i in instances if task.id_of(i) in ids]
    where: dict[int, Placement] = {}
    for distance in plan.distances_at(length) if chosen else ():
        file = layout.planted_file(out, model, length, distance)
        file.parent.mkdir(parents=True, exist_ok=True)
        where[distance] = task.plant(chosen, distance, count, plan, file)
    return where


def read_placements(
    out: Path, model: str, length: int, distances: Sequence[int], task: HorizonTask
) -> dict[int, Placement]:
    where: dict[int, Placement] = {}
    for distance in distances:
        found = task.placement(layout.planted_file(out, model, length, distance))
        if found is not None:
            where[distance] = found
    return where


def copy_used(gain: PairedScores) -> bool:
    """The intact run uses a planted copy by the gain's own test: p below the copy horizon's
    :data:`~longread.calibration.verdicts.HORIZON_P`, the interval above 0 (the page adjusts it again)."""
    if gain.n < MIN_PAIRED or gain.too_few_books:
        return False
    return copy_shown(gain.p, gain.ci_low)


def gate_distance(
    keep: int, where: dict[int, Placement], gains: dict[int, PairedScores]
) -> tuple[int | None, str]:
    """The nearest distance whose every copy the control at K perturbs whole (``perturbed``, by the
    copies as planted) and whose copy the intact run uses; else None and why."""
    if not where:
        return None, "this model could plant a copy in none of the instances"
    if all(gains.get(d) is None or gains[d].n == 0 for d in where):
        return None, "no instance every model fitted could hold a copy for every model"
    beyond = [d for d in sorted(where) if position_of(keep, where[d]) == "perturbed"]
    if not beyond:
        listed = ", ".join(f"{d:,}" for d in sorted(where))
        return None, f"no planted copy lies wholly before the last {keep:,} tokens (distances {listed})"
    used = [d for d in beyond if d in gains and copy_used(gains[d])]
    if not used:
        listed = ", ".join(f"{d:,}" for d in beyond)
        return None, f"the model was not shown to use a copy planted beyond K (at {listed} tokens)"
    return used[0], ""
