"""``longread calibrate``: plant the gold's opening in the distant context and run the controls on it.

The chosen instances (``--sample``/``--limit``, as ``eval`` chooses them) are written as
``unplanted.jsonl``; each is planted at every distance (:mod:`longread.benchmarks.chapterbreak.planted`)
into ``planted.jsonl``, in the task's own format (``longread eval --data planted.jsonl`` runs it). Both
go through the same ablation — the intact run and every control × K, model loaded once, each run
resumable (:mod:`longread.report.ablation`) — into ``unplanted/`` and ``planted/``; then
:mod:`longread.calibration.verdicts` pairs them and :mod:`longread.calibration.report` writes
``calibration.md``, ``.json`` and ``.png``.

Every setting is checked before anything runs: a distance at or beyond a prefix length (or that the
data's prefixes cannot hold), a gold shorter than the copy, a keep-last list that brackets no distance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longread.benchmarks.chapterbreak.io import load_instances, write_instances
from longread.benchmarks.chapterbreak.planted import SLACK, Count, check_plantable, plant_copies
from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance
from longread.calibration.report import write_calibration
from longread.calibration.verdicts import (
    CalibrationRow,
    Family,
    Horizon,
    Outcomes,
    Placement,
    compare,
    controlled_row,
    copy_horizon,
    intact_row,
)
from longread.errors import LongreadError
from longread.evaluation.controls import ControlSettings
from longread.evaluation.runner import RunOptions
from longread.evaluation.selection import select
from longread.metrics.paired import PairedScores
from longread.models.requests.control import CONTROL_KINDS
from longread.report.ablation import run_ablation, run_dir_name
from longread.runs.layout import read_samples

UNPLANTED = "unplanted.jsonl"
PLANTED = "planted.jsonl"


class CalibrationError(LongreadError):
    """A calibration that cannot be run as asked: names the value and what to change."""


@dataclass(frozen=True)
class CalibrationPlan:
    distances: tuple[int, ...]
    controls: tuple[str, ...]
    keep_last: tuple[int, ...]
    copy_tokens: int = 64
    seed: int = 0
    """Seeds the copy's place among nearby sentence boundaries and every control."""


@dataclass(frozen=True)
class CalibrationFiles:
    markdown: Path
    json_file: Path
    plot: Path
    planted: Path
    rows: tuple[CalibrationRow, ...]
    horizons: tuple[Horizon, ...]
    failed: int


def check_plan(plan: CalibrationPlan, prefix_lengths: Sequence[int]) -> None:
    """Refuse settings that cannot calibrate anything (before the model loads)."""
    unknown = [c for c in plan.controls if c not in CONTROL_KINDS or c == "intact"]
    if unknown or not plan.controls:
        raise CalibrationError(f"--controls takes shuffle, replace and none; got {', '.join(plan.controls)}")
    check_distances(plan.distances, plan.copy_tokens, prefix_lengths)
    # per distance: a K that reaches its copy and a K that keeps it whole
    keeps = plan.keep_last
    unbracketed = [
        d for d in plan.distances
        if not (any(k <= d - plan.copy_tokens for k in keeps) and any(k >= d + SLACK for k in keeps))
    ]  # fmt: skip
    if unbracketed:
        given, distances = ",".join(map(str, plan.keep_last)), ",".join(map(str, plan.distances))
        raise CalibrationError(
            f"--keep-last {given} does not bracket distance {','.join(map(str, unbracketed))} of "
            f"{distances}: each distance D needs a K at most D less the copy ({plan.copy_tokens} tokens; "
            f"the control reaches the copy) and a K at least D plus {SLACK} (the copy kept whole)"
        )


def check_distances(distances: Sequence[int], copy_tokens: int, prefix_lengths: Sequence[int]) -> None:
    """Refuse distances that cannot hold a copy: not beyond the copy, or at or beyond a prefix length."""
    if not distances or min(distances) <= copy_tokens:
        raise CalibrationError(
            f"each distance must exceed the copy's {copy_tokens} tokens; got {list(distances)}"
        )
    shortest = min(prefix_lengths)
    for distance in distances:
        if distance + SLACK >= shortest:
            raise CalibrationError(
                f"distance {distance} is at or beyond the prefix length {shortest} (with the {SLACK} tokens "
                f"a sentence boundary may add): the copy would be cut off; use distances below "
                f"{shortest - SLACK} or longer --prefix-lengths"
            )


def prepare_data(
    data: Path, out: Path, plan: CalibrationPlan, count: Count, options: RunOptions
) -> tuple[Path, Path, list[ChapterBreakInstance]]:
    """The chosen instances and their planted copies (``plan``'s distances, copy length and seed), written
    in ``out``; the planted instances."""
    instances = select(
        load_instances(data), limit=options.limit, sample=options.sample, seed=options.sample_seed,
        group_of=lambda i: i.book_id, id_of=lambda i: i.id,
    )  # fmt: skip
    if not instances:
        raise CalibrationError(f"{data}: no ChapterBreak instance to plant in")
    check_plantable(instances, plan.distances, count, plan.copy_tokens)
    planted = plant_copies(instances, plan.distances, count, copy_tokens=plan.copy_tokens, seed=plan.seed)
    out.mkdir(parents=True, exist_ok=True)
    write_instances(instances, out / UNPLANTED)
    write_instances(planted, out / PLANTED)
    return out / UNPLANTED, out / PLANTED, planted


def run_calibration(
    make: Callable[[], Any],
    data: Path,
    backend: Any,
    out: Path,
    plan: CalibrationPlan,
    options: RunOptions,
    *,
    count: Count,
    on_run: Callable[[int, int, str, Path], None] | None = None,
) -> CalibrationFiles:
    """Plant, run both ablations, pair and write the calibration (see the module docstring)."""
    lengths = tuple(make().settings.prefix_lengths)
    check_plan(plan, lengths)
    unplanted, planted_file, planted = prepare_data(data, out, plan, count, options)
    controls = [ControlSettings(kind, keep, plan.seed) for kind in plan.controls for keep in plan.keep_last]  # type: ignore[arg-type]
    chosen = RunOptions(resume=True, show_progress=options.show_progress, request_batch=options.request_batch)
    total = 2 * (1 + len(controls))
    failed = 0
    for offset, (name, file) in enumerate((("unplanted", unplanted), ("planted", planted_file))):

        def announce(
            index: int, _: int, run: str, path: Path, offset: int = offset, name: str = name
        ) -> None:
            if on_run is not None:
                on_run(offset * (1 + len(controls)) + index, total, f"{name}/{run}", path)

        files = run_ablation(make, file, backend, out / name, controls, chosen, on_run=announce)
        failed += files.failed
    rows = calibration_rows(out, planted, controls, lengths)
    horizons = tuple(copy_horizon(rows, length) for length in lengths)
    md, js, png = write_calibration(out, rows, horizons, plan, lengths, backend_label(backend))
    return CalibrationFiles(md, js, png, planted_file, tuple(rows), horizons, failed)


def backend_label(backend: Any) -> str:
    describe = getattr(backend, "describe", None)
    facts = describe() if callable(describe) else {}
    return str(facts.get("model") or facts.get("name") or type(backend).__name__)


def outcomes_of(run: Path, original: dict[str, tuple[str, int]] | None = None) -> dict[int, Outcomes]:
    """distance (0: unplanted) → (unplanted instance id, prefix length) → (right?, book)."""
    by_distance: dict[int, dict[tuple[str, int], tuple[bool, str]]] = {}
    for row in read_samples(run):
        instance = str(row["id"])
        source, distance = (instance, 0) if original is None else original[instance]
        by_distance.setdefault(distance, {})[(source, int(row["prefix_length"]))] = (
            bool(row["correct"]), str(row["book_id"]),
        )  # fmt: skip
    return dict(by_distance)


def planted_sources(planted: Sequence[ChapterBreakInstance]) -> dict[str, tuple[str, int]]:
    """planted instance id → (the unplanted instance's id, the distance asked for)."""
    return {i.id: (i.planted.original_id, i.planted.distance) for i in planted if i.planted is not None}


def placements(planted: Sequence[ChapterBreakInstance]) -> dict[int, Placement]:
    spots: dict[int, list[tuple[int, int]]] = {}
    for instance in planted:
        record = instance.planted
        assert record is not None
        spots.setdefault(record.distance, []).append((record.distance_tokens, record.copy_tokens))
    return {
        d: Placement(d, min(t for t, _ in s), max(t for t, _ in s), max(c for _, c in s))
        for d, s in spots.items()
    }


def calibration_rows(
    out: Path,
    planted: Sequence[ChapterBreakInstance],
    controls: Sequence[ControlSettings],
    lengths: Sequence[int],
) -> list[CalibrationRow]:
    original = planted_sources(planted)
    where = placements(planted)
    names = ["intact", *(run_dir_name(control) for control in controls)]
    # each run's rows read once: unplanted[name][0], planted[name][distance]
    unplanted = {name: outcomes_of(out / "unplanted" / name) for name in names}
    planted_runs = {name: outcomes_of(out / "planted" / name, original) for name in names}

    def at(outcomes: Outcomes, length: int) -> Outcomes:
        return {k: v for k, v in outcomes.items() if k[1] == length}

    # every comparison first: the page's tests are one family, adjusted together
    cells: list[tuple[int, Placement, ControlSettings | None, tuple[PairedScores, ...]]] = []
    for length in lengths:
        intact_u = at(unplanted["intact"].get(0, {}), length)
        for distance, placement in sorted(where.items()):
            intact_p = at(planted_runs["intact"].get(distance, {}), length)
            cells.append((length, placement, None, (compare(intact_u, intact_p),)))
            for control in controls:
                name = run_dir_name(control)
                u = at(unplanted[name].get(0, {}), length)
                p = at(planted_runs[name].get(distance, {}), length)
                cells.append(
                    (length, placement, control, (compare(u, p), compare(intact_p, p), compare(intact_u, u)))
                )
    family = Family([test for *_, tests in cells for test in tests])
    rows: list[CalibrationRow] = []
    for length, placement, setting, tests in cells:
        if setting is None:
            rows.append(intact_row(length, placement, tests[0], family))
        else:
            gain, effect, plain = tests
            rows.append(
                controlled_row(
                    length, placement, setting.kind, setting.keep_last, gain, effect, plain, family
                )
            )
    return rows
