"""Running a horizon campaign: every model on the same chosen instances, per prefix length the intact
run, the copy horizon's planted runs, the search for the used context and its calibration gate.

Two passes over the models: the first makes each model's intact runs (so the instances every model
fitted are known), the second plants, searches and gates on those instances only. Every run is a
resumable run folder (:mod:`longread.horizon.layout`); running the same command again replays the
search on the finished runs and goes on where it stopped. The chosen instances are written once, in the
data's format, so every model reads the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longread.benchmarks.chapterbreak.io import load_instances, write_instances
from longread.benchmarks.chapterbreak.planted import SLACK, Count, plant_copies
from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance
from longread.calibration.verdicts import HORIZON_P, compare
from longread.errors import LongreadError
from longread.evaluation.controls import ControlledTask, ControlSettings
from longread.evaluation.registry import make_task
from longread.evaluation.runner import RunOptions, run_task
from longread.evaluation.selection import select
from longread.horizon import layout
from longread.horizon.outcomes import Fitted, common, fitted, read_outcomes, restrict
from longread.horizon.plan import HorizonPlan, keep_grid, max_runs
from longread.horizon.progress import CampaignProgress
from longread.horizon.search import Step, search_keep
from longread.metrics.claims import MIN_PAIRED
from longread.metrics.paired import PairedScores

OpenBackend = Callable[[str], AbstractContextManager[Any]]
"""A model spec → a context giving its loaded backend (closed, and its memory handed back, on exit)."""


class HorizonError(LongreadError):
    """A campaign that cannot go on: names what is missing and what to do."""


@dataclass(frozen=True)
class Gate:
    keep: int
    distance: int | None
    """The planted distance the gate ran at (None: none lies beyond K, or the copy is not used there)."""
    reason: str = ""
    """Why no gate ran, where none did."""


@dataclass
class LengthRecord:
    """What one model's campaign at one prefix length ran."""

    model: str
    length: int
    fits: Fitted
    steps: list[Step] = field(default_factory=list)
    distances: tuple[int, ...] = ()
    plantable: int = 0
    """Common instances a copy could be planted in (the gold holds the copy, the prefix the distance)."""
    gate: Gate | None = None


@dataclass
class CampaignRecord:
    models: tuple[str, ...]
    plan: HorizonPlan
    instances: list[ChapterBreakInstance]
    common: dict[int, frozenset[str]] = field(default_factory=dict)
    lengths: dict[tuple[str, int], LengthRecord] = field(default_factory=dict)
    runs: list[Path] = field(default_factory=list)
    failed: int = 0


def choose_instances(data: Path, out: Path, options: RunOptions) -> list[ChapterBreakInstance]:
    """The instances every model reads (``--sample``/``--limit`` as ``eval`` chooses), written once."""
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
    out.mkdir(parents=True, exist_ok=True)
    write_instances(chosen, out / layout.INSTANCES)
    return chosen


class Campaign:
    def __init__(
        self,
        out: Path,
        plan: HorizonPlan,
        models: Sequence[str],
        settings: dict[str, Any],
        instances: list[ChapterBreakInstance],
        progress: CampaignProgress,
        show_progress: bool = True,
    ) -> None:
        folders = [layout.model_folder(m) for m in models]
        if len(set(folders)) != len(folders):
            raise HorizonError(f"two models share a folder name ({', '.join(folders)}): give distinct names")
        self.out, self.plan, self.settings, self.progress = out, plan, settings, progress
        self.show = show_progress
        self.record = CampaignRecord(tuple(models), plan, instances)
        self.chosen = [i.id for i in instances]

    def run(self, open_backend: OpenBackend) -> CampaignRecord:
        for model in self.record.models:
            with open_backend(model) as backend:
                for length in self.plan.prefix_lengths:
                    self._run(
                        backend,
                        self.out / layout.INSTANCES,
                        layout.length_dir(self.out, model, length) / "intact",
                        length,
                        None,
                    )
        for length in self.plan.prefix_lengths:
            fits = {
                m: fitted(layout.length_dir(self.out, m, length) / "intact", length, self.chosen)
                for m in self.record.models
            }
            self.record.common[length] = common(fits)
            for model, fit in fits.items():
                self.record.lengths[(model, length)] = LengthRecord(model, length, fit)
        for model in self.record.models:
            with open_backend(model) as backend:
                for length in self.plan.prefix_lengths:
                    self._length(backend, model, length)
        return self.record

    def _length(self, backend: Any, model: str, length: int) -> None:
        record = self.record.lengths[(model, length)]
        ids = self.record.common[length]
        if not ids:
            return
        intact = restrict(read_outcomes(layout.length_dir(self.out, model, length) / "intact", length), ids)
        record.distances = self.plan.distances_at(length)
        record.plantable = self._plant(backend, model, length, ids)
        gains: dict[int, PairedScores] = {}
        for distance in record.distances if record.plantable else ():
            path = layout.planted_run(self.out, model, length, distance, "intact")
            self._run(backend, layout.planted_file(self.out, model, length, distance), path, length, None)
            gains[distance] = compare(intact, read_outcomes(path, length, ids))

        def measure(keep: int) -> PairedScores:
            path = layout.control_run(self.out, model, length, self.plan.control, keep)
            self._run(backend, self.out / layout.INSTANCES, path, length, self._control(keep))
            return compare(intact, restrict(read_outcomes(path, length), ids))

        grid = keep_grid(length, self.plan.min_keep)
        record.steps = search_keep(measure, length, grid, self.plan.refine, self.plan.step)
        record.gate = self._gate(backend, model, length, record, gains)

    def _gate(
        self, backend: Any, model: str, length: int, record: LengthRecord, gains: dict[int, PairedScores]
    ) -> Gate:
        """The nearest planted distance beyond the used context whose copy the intact run uses, run under
        the control at the same K (none where no such distance was planted)."""
        keep = kept_context(record.steps, length)
        if keep >= length:
            return Gate(keep, None, "no K kept the answers, so there is nothing to calibrate")
        if not record.plantable:
            return Gate(keep, None, "no instance holds a planted copy")
        beyond = [d for d in record.distances if keep <= d - self.plan.copy_tokens]
        if not beyond:
            listed = ", ".join(f"{d:,}" for d in record.distances)
            return Gate(
                keep, None, f"no planted copy lies beyond the last {keep:,} tokens (distances {listed})"
            )
        used = [d for d in beyond if copy_used(gains[d])]
        if not used:
            listed = ", ".join(f"{d:,}" for d in beyond)
            return Gate(
                keep, None, f"the model was not shown to use a copy planted beyond K (at {listed} tokens)"
            )
        distance = used[0]
        path = layout.planted_run(self.out, model, length, distance, f"{self.plan.control}-k{keep}")
        planted = layout.planted_file(self.out, model, length, distance)
        self._run(backend, planted, path, length, self._control(keep))
        return Gate(keep, distance)

    def _plant(self, backend: Any, model: str, length: int, ids: frozenset[str]) -> int:
        count: Count | None = getattr(backend, "count_tokens", None)
        if not callable(count):
            raise HorizonError(
                f"{model}: this backend cannot count its tokens, and the copy is planted in "
                "the model's tokens; use a local, GGUF, served or Ray-replicated model"
            )
        copy = self.plan.copy_tokens
        farthest = max(self.plan.distances_at(length))
        plantable = [
            i
            for i in self.record.instances
            if i.id in ids and count(i.gold) >= copy and count(i.prefix) - copy - SLACK > farthest
        ]
        for distance in self.plan.distances_at(length):
            file = layout.planted_file(self.out, model, length, distance)
            if plantable:
                file.parent.mkdir(parents=True, exist_ok=True)
                write_instances(
                    plant_copies(plantable, [distance], count, copy_tokens=copy, seed=self.plan.seed), file
                )
        return len(plantable)

    def _control(self, keep: int) -> ControlSettings:
        return ControlSettings(self.plan.control, keep, self.plan.seed)  # type: ignore[arg-type]

    def _run(
        self, backend: Any, data: Path, path: Path, length: int, control: ControlSettings | None
    ) -> None:
        task: Any = make_task("chapterbreak", {**self.settings, "prefix_lengths": str(length)})
        if control is not None:
            task = ControlledTask(task, control)
        name = str(path.relative_to(self.out))
        self.progress.start(name)
        outcome = run_task(task, data, backend, path, RunOptions(resume=True, show_progress=self.show))
        self.record.failed += len(outcome.errors)
        self.record.runs.append(path)
        self.progress.finish(name, outcome.scored + outcome.reused, outcome.skipped_done)


def copy_used(gain: PairedScores) -> bool:
    """The intact run uses a planted copy: its gain is a claimable effect by its own test, p below the
    copy horizon's :data:`~longread.calibration.verdicts.HORIZON_P` (the page adjusts it again)."""
    if gain.n < MIN_PAIRED or gain.too_few_books or gain.p is None:
        return False
    return gain.p < HORIZON_P and gain.ci_low > 0


def kept_context(steps: Sequence[Step], length: int) -> int:
    """The smallest K such that every K tried from it up is a null (L where the largest is not)."""
    kept = length
    for step in sorted(steps, key=lambda s: s.keep, reverse=True):
        if not step.null:
            break
        kept = step.keep
    return kept


def planned_runs(plan: HorizonPlan, models: int) -> int:
    """At most this many runs in the campaign."""
    total = 0
    for length in plan.prefix_lengths:
        unplanted, planted = max_runs(plan, length)
        total += unplanted + planted
    return total * models


def iter_lengths(record: CampaignRecord) -> Iterator[LengthRecord]:
    for model in record.models:
        for length in record.plan.prefix_lengths:
            yield record.lengths[(model, length)]
