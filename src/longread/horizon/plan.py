"""What a horizon campaign will run, checked before any model loads, and what it will cost.

Per prefix length L the keep-last values K are searched on a log grid — L/2, L/4, … down to
``min_keep``, then 0 (everything replaced) — descending while the answers stay equal to the intact
run's (a null), then refined by bisection between the last K that kept them and the first that did not
(:mod:`longread.horizon.search`). The copy is planted at ``distances`` (default L/4, L/2 and 3L/4, those a
prefix of L can hold) for the copy horizon and the calibration gate.

The runs, samples and tokens a dry run prints are upper bounds: every grid K and every refinement step, per
model × L, each reading the chosen instances at L plus what is scored after them (candidates, options).
Its time is those tokens at the median rate (by tokens read) of the earlier sessions of the same model in
the output folder, else at :data:`REFERENCE_RATES`: an estimate, as the machine's other work decides.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from longread.errors import LongreadError
from longread.horizon.layout import model_folder
from longread.horizon.search import SEARCHES
from longread.models.requests.control import CONTROL_KINDS
from longread.text.planting import SLACK

REFERENCE_RATES = {"smollm2": 160.0, "gemma3": 125.0}
"""Tokens a second each model reads on one thread of the reference machine (2 cores), with another model
on the other: :func:`observed_rate` on the ChapterBreak corpus campaign's folder (one process per model,
both at once, other work on the machine at times) with L = 1,024 done and L = 2,048 half done — about 160
and 125 (162 over 24 sessions and 125 over 21 then; it moves by a few tokens a second as sessions are
added). Its intact runs alone read faster (198–240 and 169–180), which an earlier estimate took and which
undercounted the campaign's time by a third. A guess for other machines: earlier runs in the output
folder replace it."""


class HorizonPlanError(LongreadError):
    """A horizon setting that cannot be run: names the value and what to give instead."""


@dataclass(frozen=True)
class HorizonPlan:
    prefix_lengths: tuple[int, ...]
    control: str = "replace"
    delta: float = 0.05
    """The null bound a "depends on no more than" sentence asks for (the report also states the bound the
    data reached where it is wider)."""
    min_keep: int = 32
    """The smallest K of the log grid before 0."""
    refine: int = 2
    """Bisection steps between the last K that kept the answers and the first that did not."""
    step: int = 16
    """Bisection K values are multiples of this."""
    distances: dict[int, tuple[int, ...]] = field(default_factory=dict)
    """Per prefix length, the planted copy's distances (empty: :func:`default_distances`)."""
    copy_tokens: int = 64
    seed: int = 0
    """Seeds the copy's place and every control."""
    search: str = "descend"
    """``descend`` the grid, or try K = 0 first (``zero-first``): :mod:`longread.horizon.search`."""

    def distances_at(self, length: int) -> tuple[int, ...]:
        return self.distances.get(length) or default_distances(length, self.copy_tokens)


def keep_grid(length: int, min_keep: int) -> tuple[int, ...]:
    """L/2, L/4, … while at least ``min_keep``, then 0."""
    grid: list[int] = []
    keep = length // 2
    while keep >= max(1, min_keep):
        grid.append(keep)
        keep //= 2
    return (*grid, 0)


def room(length: int, copy_tokens: int) -> int:
    """The largest distance a prefix of ``length`` tokens holds a copy at (a copy starts up to SLACK tokens
    farther back than its distance, and must start inside the prefix; as ``calibrate`` checks)."""
    del copy_tokens  # the copy lies after its start, towards the prefix's end
    return length - SLACK - 1


def default_distances(length: int, copy_tokens: int) -> tuple[int, ...]:
    """L/4, L/2 and 3L/4, those beyond the copy that a prefix of L holds."""
    wanted = (length // 4, length // 2, 3 * length // 4)
    return tuple(d for d in wanted if copy_tokens < d <= room(length, copy_tokens))


def check_plan(plan: HorizonPlan) -> None:
    """Refuse what cannot give an answer, before anything loads."""
    if plan.control not in CONTROL_KINDS or plan.control == "intact":
        raise HorizonPlanError(f"--control takes shuffle, replace or none; got {plan.control!r}")
    if plan.search not in SEARCHES:
        raise HorizonPlanError(f"--search takes {' or '.join(SEARCHES)}; got {plan.search!r}")
    if not 0 < plan.delta < 1:
        raise HorizonPlanError(f"--delta is a difference of accuracies between 0 and 1; got {plan.delta}")
    if not plan.prefix_lengths or min(plan.prefix_lengths) < 2 * max(plan.min_keep, 1):
        raise HorizonPlanError(
            f"--prefix-lengths must be at least twice --min-keep ({plan.min_keep}); got "
            f"{list(plan.prefix_lengths)}"
        )
    if plan.copy_tokens < 1 or plan.min_keep < 0:
        raise HorizonPlanError(
            f"--copy-tokens takes 1 or more and --min-keep 0 or more; got {plan.copy_tokens}, {plan.min_keep}"
        )
    if plan.refine < 0 or plan.step < 1:
        raise HorizonPlanError(
            f"--refine takes 0 or more and the step 1 or more; got {plan.refine}, {plan.step}"
        )
    for length in plan.prefix_lengths:
        distances = plan.distances_at(length)
        if not distances:
            raise HorizonPlanError(
                f"prefix length {length} holds no planted copy of {plan.copy_tokens} tokens (a distance must "
                f"exceed the copy and be at most {room(length, plan.copy_tokens)}); give --distances"
            )
        bad = [d for d in distances if not plan.copy_tokens < d <= room(length, plan.copy_tokens)]
        if bad:
            raise HorizonPlanError(
                f"distance {bad[0]} does not fit a prefix of {length} tokens with a {plan.copy_tokens}-token "
                f"copy: give distances above {plan.copy_tokens} and at most {room(length, plan.copy_tokens)}"
            )


def parse_distances(text: str, lengths: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """``--distances``: ``256,512`` for every length, or ``1024:256,512;2048:512,1024`` per length."""
    if not text.strip():
        return {}
    try:
        if ":" not in text:
            values = tuple(sorted({int(v) for v in text.split(",") if v.strip()}))
            if not values:
                raise ValueError(text)
            return {length: values for length in lengths}
        parsed: dict[int, tuple[int, ...]] = {}
        for part in text.split(";"):
            length, _, listed = part.partition(":")
            parsed[int(length)] = tuple(sorted({int(v) for v in listed.split(",") if v.strip()}))
            if not parsed[int(length)]:
                raise ValueError(part)
    except ValueError:
        raise HorizonPlanError(
            f"--distances takes token counts, e.g. 256,512 or 1024:256,512;2048:512,1024; got {text!r}"
        ) from None
    unknown = sorted(set(parsed) - set(lengths))
    if unknown:
        raise HorizonPlanError(f"--distances names prefix length {unknown[0]}, not among --prefix-lengths")
    return parsed


@dataclass(frozen=True)
class Cost:
    model: str
    length: int
    runs: int
    """At most: the intact run, one per distance, every grid K, every refinement step and the gate."""
    samples: int
    tokens: int
    seconds: float
    rate: float
    rate_source: str


def max_runs(plan: HorizonPlan, length: int) -> tuple[int, int]:
    """(runs on the unplanted instances, runs on one distance's planted instances), at most."""
    unplanted = 1 + len(keep_grid(length, plan.min_keep)) + plan.refine
    planted = len(plan.distances_at(length)) + 1  # the intact copy horizon, one gate
    return unplanted, planted


def estimate(plan: HorizonPlan, model: str, instances: int, after_tokens: int, out: Path) -> list[Cost]:
    """The campaign's cost for one model, per prefix length (see the module docstring); ``after_tokens``:
    what each sample reads after its context (ChapterBreak's six candidates, NarrativeXL's prompt and
    options)."""
    rate, source = observed_rate(out, model)
    costs = []
    for length in plan.prefix_lengths:
        unplanted, planted = max_runs(plan, length)
        samples = instances * (unplanted + planted)
        tokens = samples * (length + after_tokens)
        costs.append(Cost(model, length, unplanted + planted, samples, tokens, tokens / rate, rate, source))
    return costs


def observed_rate(out: Path, model: str) -> tuple[float, str]:
    """Tokens a second of the model's earlier runs in ``out``: the median over their sessions (each
    ``timing.json`` lists its sessions), each weighted by the tokens it read, so neither one session
    slowed by other jobs on the machine (a mean over all sessions said 154 h where the runs needed 15) nor
    a resume that only loaded the model sets the estimate; else the reference."""
    sessions = sorted(
        (tokens / seconds, tokens)
        for tokens, seconds in _session_totals(sorted((out / model_folder(model)).glob("**/timing.json")))
        if tokens > 0 and seconds > 0
    )
    if sessions:
        half, read = sum(tokens for _, tokens in sessions) / 2, 0.0
        for rate, tokens in sessions:
            read += tokens
            if read >= half:
                return rate, f"the median of {len(sessions)} earlier session(s) in {out}, by tokens read"
    reference = REFERENCE_RATES.get(model.split(":")[0].lower())
    if reference is not None:
        return reference, "the reference machine's rate (one thread of 2 cores)"
    return 1000.0, "an assumed 1,000 tokens a second (no earlier run of this model)"


def _session_totals(timings: Sequence[Path]) -> list[tuple[float, float]]:
    """(tokens, wall seconds) of every session of every readable timing file; a file without sessions
    counts as one (its total)."""
    totals = []
    for timing in timings:
        try:
            held = json.loads(timing.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for session in held.get("sessions") or [held.get("total") or {}]:
            totals.append((float(session.get("tokens") or 0), float(session.get("wall_time_s") or 0)))
    return totals
