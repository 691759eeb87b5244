"""What a horizon campaign needs of a benchmark, and the benchmarks it runs on.

A campaign (:mod:`longread.horizon.campaign`) reads *instances* — ChapterBreak instances, or NarrativeXL
read-along questions each made a reading of its own — at a length L, under a control at K, and with a
copy of the right answer planted D tokens back. Each benchmark's adapter says how: which instances to
choose and how to write them, the task that reads them at L, which ones can hold a copy and how it is
planted, where the copies lie, what each sample reads after its context (for the cost), and what a
trivial rule scores on them (the shortcut check). :mod:`longread.horizon.benchmarks` gives a task's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from longread.calibration.verdicts import Placement
from longread.errors import LongreadError
from longread.evaluation.controls import ControlSettings
from longread.evaluation.runner import RunOptions
from longread.horizon.plan import HorizonPlan
from longread.text.planting import Count


class HorizonError(LongreadError):
    """A campaign that cannot go on: names what is missing and what to do."""


@dataclass(frozen=True)
class Shortcuts:
    """What trivial rules score on some instances (expected hits, ties broken at random)."""

    rules: tuple[str, ...]
    instances: int
    accuracy: tuple[float, ...]
    chance: float


class HorizonTask(Protocol):
    name: str
    """The task as ``longread eval`` names it."""
    title: str
    unit: str
    """What one instance is, in the report's words ("instances", "questions")."""

    def choose(self, data: Path, options: RunOptions, plan: HorizonPlan) -> list[Any]: ...

    def id_of(self, instance: Any) -> str: ...

    def book_of(self, instance: Any) -> str: ...

    def lines(self, instances: Sequence[Any]) -> list[str]:
        """The instances as the campaign's file holds them (one a line)."""
        ...

    def task(self, length: int, control: ControlSettings | None) -> Any:
        """The task reading at L, under ``control`` (None: intact)."""
        ...

    def plantable(
        self, instances: Sequence[Any], count: Count, plan: HorizonPlan, length: int
    ) -> frozenset[str]:
        """Ids of the instances that can hold the copy at every distance of L, in this model's tokens."""
        ...

    def plant(
        self, instances: Sequence[Any], distance: int, count: Count, plan: HorizonPlan, file: Path
    ) -> Placement:
        """Write ``instances`` planted at ``distance`` to ``file``; where their copies lie."""
        ...

    def placement(self, file: Path) -> Placement | None:
        """Where the copies of a planted file lie (None: no such file)."""
        ...

    def read_after(self, instances: Sequence[Any]) -> int:
        """About how many tokens each sample reads after its context (the cost's estimate)."""
        ...

    def shortcuts(self, instances: Sequence[Any]) -> Shortcuts: ...


def write_lines(lines: Sequence[str], file: Path) -> None:
    from longread.files import atomic_write_text

    atomic_write_text(file, "".join(line + "\n" for line in lines))
