"""Running a horizon campaign: every model on the same chosen instances, per prefix length the intact
run, the copy horizon's planted runs, the search for the used context and its calibration gate.

Two passes over the models: the first makes each model's intact runs and finds which instances its
tokenizer can plant a copy in (so the instances every model fitted, and could plant, are known); the
second plants, searches and gates. Every run is a resumable run folder (:mod:`longread.horizon.layout`)
whose data does not depend on what the other models fitted, so running the same command again replays
the search on the finished runs and goes on where it stopped. The chosen instances are written once, in
the data's format, so every model reads the same bytes. What is benchmark-specific — choosing, planting,
the task read at L — is the benchmark's adapter's (:mod:`longread.horizon.tasks`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longread.calibration.verdicts import Outcomes, compare
from longread.evaluation.controls import ControlSettings
from longread.evaluation.runner import RunOptions, run_task
from longread.horizon import layout
from longread.horizon.outcomes import Fitted, common, fitted, read_outcomes, restrict
from longread.horizon.plan import HorizonPlan, keep_grid, max_runs
from longread.horizon.planting import gate_distance, plant
from longread.horizon.progress import CampaignProgress
from longread.horizon.search import Step, search_keep
from longread.horizon.tasks import HorizonError, HorizonTask, write_lines
from longread.metrics.paired import PairedScores
from longread.runs.layout import CONFIG_FILE

OpenBackend = Callable[[str], AbstractContextManager[Any]]
"""A model spec → a context giving its loaded backend (closed, and its memory handed back, on exit)."""

__all__ = ["Campaign", "CampaignRecord", "HorizonError", "check_models", "check_out", "planned_runs"]


@dataclass(frozen=True)
class Gate:
    keep: int
    distance: int | None
    """The planted distance the gate ran at (None: none could, ``reason`` says why)."""
    reason: str = ""


@dataclass
class LengthRecord:
    """What one model's campaign at one prefix length ran."""

    model: str
    length: int
    fits: Fitted
    steps: list[Step] = field(default_factory=list)
    distances: tuple[int, ...] = ()
    plantable: frozenset[str] = frozenset()
    """Chosen instances this model's tokenizer could plant a copy in at every distance of L."""
    gate: Gate | None = None


@dataclass
class CampaignRecord:
    models: tuple[str, ...]
    plan: HorizonPlan
    task: HorizonTask
    instances: list[Any]
    common: dict[int, frozenset[str]] = field(default_factory=dict)
    """Per L, the instances every model fitted: every comparison's instances."""
    planted_common: dict[int, frozenset[str]] = field(default_factory=dict)
    """Per L, those of ``common`` every model could plant: the copy horizon's and the gate's."""
    lengths: dict[tuple[str, int], LengthRecord] = field(default_factory=dict)
    runs: list[Path] = field(default_factory=list)
    failed: int = 0


def check_out(out: Path, task: HorizonTask, instances: Sequence[Any]) -> bool:
    """Refuse an output folder that is a file or holds a campaign on other instances (compared whole:
    the same ids built with other prefixes are other instances); True where it holds these already."""
    if out.exists() and not out.is_dir():
        raise HorizonError(f"--out {out} is a file: give a folder for the campaign")
    file = out / layout.INSTANCES
    lines = task.lines(instances)
    same = ("give the same task, --data, --sample, --sample-seed, --limit and longest --prefix-lengths, or "
            "another --out")  # fmt: skip
    if not file.is_file():
        read = _instances_read(out)
        chosen = hashlib.sha256("".join(line + "\n" for line in lines).encode("utf-8")).hexdigest()
        if read and read[1] != chosen:
            raise HorizonError(
                f"{out} holds runs on other {task.unit} than the {len(instances):,} chosen now ({read[0]} "
                f"read data of sha256 {read[1][:12]}, these are {chosen[:12]}; {file.name} is not there, as "
                f"in a campaign kept without the books' text): {same} — built from the same books"
            )
        return False
    held = file.read_text(encoding="utf-8").splitlines()
    if held != lines:
        raise HorizonError(
            f"{out} holds a campaign on other {task.unit} ({len(held):,} in {file.name}, {len(instances):,} "
            f"chosen now, or the same ids built otherwise): {same}"
        )
    return True


def _instances_read(out: Path) -> tuple[Path, str] | None:
    """An intact run in ``out`` and the sha256 of the instances it read (None: no readable intact run;
    a damaged config is named by its run when it resumes)."""
    for config in sorted(out.glob(f"*/L*/intact/{CONFIG_FILE}")):
        try:
            return config.parent, str(
                json.loads(config.read_text(encoding="utf-8"))["config"]["data"]["sha256"]
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return None


def write_chosen(out: Path, task: HorizonTask, instances: Sequence[Any]) -> None:
    """Write the chosen instances once (see :func:`check_out`)."""
    if check_out(out, task, instances):
        return
    out.mkdir(parents=True, exist_ok=True)
    write_lines(task.lines(instances), out / layout.INSTANCES)


def check_models(models: Sequence[str]) -> None:
    folders = [layout.model_folder(m) for m in models]
    if not models or len(set(folders)) != len(folders):
        raise HorizonError(f"give models with distinct folder names (got {', '.join(folders) or 'none'})")


class Campaign:
    def __init__(
        self,
        out: Path,
        plan: HorizonPlan,
        models: Sequence[str],
        task: HorizonTask,
        instances: list[Any],
        progress: CampaignProgress,
        show_progress: bool = True,
    ) -> None:
        check_models(models)
        write_chosen(out, task, instances)
        self.out, self.plan, self.task, self.progress = out, plan, task, progress
        self.show = show_progress
        self.record = CampaignRecord(tuple(models), plan, task, instances)
        self.chosen = [task.id_of(i) for i in instances]

    def run(self, open_backend: OpenBackend) -> CampaignRecord:
        plantables: dict[tuple[str, int], frozenset[str]] = {}
        for model in self.record.models:
            with open_backend(model) as backend:
                count = counter(backend, model)
                for length in self.plan.prefix_lengths:
                    intact = layout.length_dir(self.out, model, length) / "intact"
                    self._run(backend, self.out / layout.INSTANCES, intact, length, None)
                    instances = self.record.instances
                    plantables[(model, length)] = self.task.plantable(instances, count, self.plan, length)
        for length in self.plan.prefix_lengths:
            fits = {
                m: fitted(layout.length_dir(self.out, m, length) / "intact", length, self.chosen)
                for m in self.record.models
            }
            self.record.common[length] = common(fits)
            self.record.planted_common[length] = self.record.common[length].intersection(
                *(plantables[(m, length)] for m in self.record.models)
            )
            for model, fit in fits.items():
                self.record.lengths[(model, length)] = LengthRecord(
                    model, length, fit, plantable=plantables[(model, length)]
                )
        for model in self.record.models:
            with open_backend(model) as backend:
                for length in self.plan.prefix_lengths:
                    self._length(backend, model, length)
        return self.record

    def _length(self, backend: Any, model: str, length: int) -> None:
        record = self.record.lengths[(model, length)]
        ids, planted_ids = self.record.common[length], self.record.planted_common[length]
        if not ids:
            return
        intact = restrict(read_outcomes(layout.length_dir(self.out, model, length) / "intact", length), ids)
        record.distances = self.plan.distances_at(length)
        where = plant(
            self.out,
            model,
            length,
            self.task,
            self.record.instances,
            record.plantable,
            counter(backend, model),
            self.plan,
        )
        gains: dict[int, PairedScores] = {}
        for distance in sorted(where):
            path = layout.planted_run(self.out, model, length, distance, "intact")
            self._run(backend, layout.planted_file(self.out, model, length, distance), path, length, None)
            gains[distance] = compare(restrict(intact, planted_ids), read_outcomes(path, length, planted_ids))

        def measure(keep: int) -> PairedScores:
            path = layout.control_run(self.out, model, length, self.plan.control, keep)
            self._run(backend, self.out / layout.INSTANCES, path, length, self._control(keep))
            return controlled_scores(path, length, intact, ids)

        grid = keep_grid(length, self.plan.min_keep)
        zero_first = self.plan.search == "zero-first"
        record.steps = search_keep(measure, length, grid, self.plan.refine, self.plan.step, zero_first)
        keep = kept_context(record.steps, length)
        if keep >= length:
            record.gate = Gate(keep, None, "no K kept the answers, so there is nothing to calibrate")
            return
        gate_at, why = gate_distance(keep, where, gains)
        record.gate = Gate(keep, gate_at, why)
        if gate_at is not None:
            path = layout.planted_run(self.out, model, length, gate_at, f"{self.plan.control}-k{keep}")
            planted = layout.planted_file(self.out, model, length, gate_at)
            self._run(backend, planted, path, length, self._control(keep))

    def _control(self, keep: int) -> ControlSettings:
        return ControlSettings(self.plan.control, keep, self.plan.seed)  # type: ignore[arg-type]

    def _run(
        self, backend: Any, data: Path, path: Path, length: int, control: ControlSettings | None
    ) -> None:
        task = self.task.task(length, control)
        name = str(path.relative_to(self.out))
        self.progress.start(name)
        outcome = run_task(task, data, backend, path, RunOptions(resume=True, show_progress=self.show))
        self.record.failed += len(outcome.errors)
        self.record.runs.append(path)
        self.progress.finish(name, outcome.scored + outcome.reused, outcome.skipped_done)


def counter(backend: Any, model: str) -> Any:
    count = getattr(backend, "count_tokens", None)
    if not callable(count):
        raise HorizonError(
            f"{model}: this backend cannot count its tokens, and the copy is planted in the "
            "model's tokens; use a local, GGUF, served or Ray-replicated model"
        )
    return count


def controlled_scores(
    run: Path, length: int, intact: Outcomes, ids: frozenset[str], confidence: float = 0.95
) -> PairedScores:
    """A control run at L against the intact outcomes, on the instances ``ids`` (every model fitted)."""
    return compare(intact, restrict(read_outcomes(run, length), ids), confidence)


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
    return models * sum(sum(max_runs(plan, length)) for length in plan.prefix_lengths)
