"""ChapterBreak in a horizon campaign: L is the prefix length, the copy is the gold's opening planted in
the prefix (:mod:`longread.benchmarks.chapterbreak.planted`), and the shortcut check is the surface rules
of :mod:`longread.benchmarks.chapterbreak.leaks`.

An instance can hold a copy at L for a model when its gold has the copy's tokens and its whole prefix
room for the farthest distance (as :func:`~longread.benchmarks.chapterbreak.planted.check_plantable`
asks), in that model's tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from longread.benchmarks.chapterbreak.io import load_instances, write_instances
from longread.benchmarks.chapterbreak.leaks import RULES, tally
from longread.benchmarks.chapterbreak.planted import SLACK, plant_copies
from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance
from longread.calibration.run import placements
from longread.calibration.verdicts import Placement
from longread.evaluation.controls import ControlledTask, ControlSettings
from longread.evaluation.registry import make_task
from longread.evaluation.runner import RunOptions
from longread.evaluation.selection import select
from longread.horizon.plan import HorizonPlan
from longread.horizon.tasks import HorizonError, Shortcuts
from longread.text.planting import Count

CANDIDATES = 6
"""ChapterBreak's gold and five negatives: what each sample reads after its prefix."""


class ChapterBreakHorizon:
    name = "chapterbreak"
    title = "ChapterBreak"
    unit = "instances"

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings

    def choose(self, data: Path, options: RunOptions, plan: HorizonPlan) -> list[ChapterBreakInstance]:
        """The instances every model reads (``--sample``/``--limit`` as ``eval`` chooses)."""
        del plan  # every instance is chosen; those shorter than L are counted as not fitted
        chosen = select(
            load_instances(data),
            limit=options.limit,
            sample=options.sample,
            seed=options.sample_seed,
            group_of=lambda i: i.book_id,
            id_of=lambda i: i.id,
        )
        if not chosen:
            raise HorizonError(f"{data}: no ChapterBreak instance to read")
        planted = [i.id for i in chosen if i.planted is not None]
        if planted:
            raise HorizonError(f"{data}: {planted[0]} is already planted; give the unplanted data")
        return chosen

    def id_of(self, instance: ChapterBreakInstance) -> str:
        return instance.id

    def book_of(self, instance: ChapterBreakInstance) -> str:
        return instance.book_id

    def lines(self, instances: Sequence[ChapterBreakInstance]) -> list[str]:
        return [i.model_dump_json() for i in instances]

    def task(self, length: int, control: ControlSettings | None) -> Any:
        task: Any = make_task("chapterbreak", {**self.settings, "prefix_lengths": str(length)})
        return task if control is None else ControlledTask(task, control)

    def plantable(
        self, instances: Sequence[ChapterBreakInstance], count: Count, plan: HorizonPlan, length: int
    ) -> frozenset[str]:
        farthest = max(plan.distances_at(length))
        copy = plan.copy_tokens
        return frozenset(
            i.id for i in instances if count(i.gold) >= copy and count(i.prefix) - copy - SLACK > farthest
        )

    def plant(
        self,
        instances: Sequence[ChapterBreakInstance],
        distance: int,
        count: Count,
        plan: HorizonPlan,
        file: Path,
    ) -> Placement:
        planted = plant_copies(instances, [distance], count, copy_tokens=plan.copy_tokens, seed=plan.seed)
        write_instances(planted, file)
        return placements(planted)[distance]

    def placement(self, file: Path) -> Placement | None:
        if not file.is_file():
            return None
        found = placements(load_instances(file))
        return next(iter(found.values()), None)

    def read_after(self, instances: Sequence[ChapterBreakInstance]) -> int:
        task: Any = make_task("chapterbreak", self.settings)
        return CANDIDATES * int(task.settings.suffix_tokens)

    def shortcuts(self, instances: Sequence[ChapterBreakInstance]) -> Shortcuts:
        counted = tally(instances)
        accuracy = tuple(counted.result(rule).accuracy for rule in RULES)
        return Shortcuts(tuple(RULES), counted.instances, accuracy, 1 / CANDIDATES)
