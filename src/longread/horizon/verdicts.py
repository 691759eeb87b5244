"""The answer of a campaign per model × prefix length, from its runs: each K tried against the intact
run, the copy horizon, the calibration gate and the sentence they allow.

The page has two families, each Holm-adjusted on its own (:class:`longread.calibration.verdicts.Family`):
the used-context comparisons (each K tried against the intact run, over every model × L) and the
calibration (each distance's planted gain and the gates' three tests); every claim uses its adjusted p
(:mod:`longread.metrics.claims`).

- **Used context** at L: the smallest K tried such that every K tried from it up is a null; its bound is
  the largest of those nulls' bounds (what the claim rules out); within δ when that bound is at most δ.
  The next K tried below it is where use was shown (an effect) or could not be ruled out. That K was
  picked by the search (the first that is not a null), so its interval is Bonferroni's over the K tried
  at that L (:func:`simultaneous_confidence`): a 95% interval picked so would miss the truth in about one
  page in seven (measured: docs/statistics.md).
- **Gate**: the planted copy at the nearest distance D whose copies, as planted, all lie before the last
  K tokens (:func:`~longread.calibration.verdicts.position_of`: ``perturbed``): the intact run must use
  it (``copies``, by the page's family) and the control at the same K must lose it (the calibration's
  ``detects``: the gain no longer established and the drop of the planted score established), at the
  used K itself. Only then is a null at K written as "depends on no more than its last K tokens";
  otherwise the page says the instrument could not tell.
- **Copy horizon**: as :func:`longread.calibration.verdicts.copy_horizon` (every distance up to it used).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

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
from longread.horizon import layout
from longread.horizon.campaign import CampaignRecord, LengthRecord, controlled_scores
from longread.horizon.outcomes import read_outcomes, restrict
from longread.horizon.planting import read_placements
from longread.horizon.search import Step
from longread.metrics.claim_words import p_cell
from longread.metrics.claims import Claim
from longread.metrics.paired import PairedScores


@dataclass(frozen=True)
class KeepRow:
    keep: int
    scores: PairedScores
    claim: Claim
    p_adjusted: float | None
    simultaneous: PairedScores | None = None
    """The same comparison with its interval simultaneous over the K tried at this L (what a sentence
    about the K the search picked states)."""


def simultaneous_confidence(tried: int) -> float:
    """Bonferroni's confidence for an interval that holds with 95% whichever of ``tried`` K is picked."""
    return 1 - 0.05 / max(1, tried)


@dataclass
class LengthAnswer:
    model: str
    length: int
    paired: int
    books: int | None
    intact: float | None
    keeps: list[KeepRow] = field(default_factory=list)
    used: int | None = None
    """The smallest K from which every K tried up is a null (None: not even the largest K tried)."""
    bound: float | None = None
    below: KeepRow | None = None
    """The next K tried below ``used`` (None: ``used`` is 0 or nothing below was tried)."""
    delta_keep: int | None = None
    """The smallest K whose nulls from it up all lie within δ (None: none does)."""
    copy_rows: list[CalibrationRow] = field(default_factory=list)
    horizon: Horizon | None = None
    gate_row: CalibrationRow | None = None
    gate_reason: str = ""
    record: LengthRecord | None = None

    @property
    def calibrated(self) -> bool:
        """The gate licenses the null at ``used``: it ran at that K, the intact run uses the copy there
        (``copies``, by the page's family) and the control at K loses it (``detects``)."""
        row = self.gate_row
        if row is None or row.verdict != "detects" or row.keep_last != self.used:
            return False
        return any(r.distance == row.distance and r.verdict == "copies" for r in self.copy_rows)


@dataclass(frozen=True)
class Families:
    """The page's two families, each Holm-adjusted on its own: the used-context comparisons (every K
    tried, every model × L) and the calibration (every planted gain and the gates' tests)."""

    keeps: Family
    calibration: Family


def answers(out: Path, record: CampaignRecord) -> tuple[list[LengthAnswer], Families]:
    """Every model × prefix length's answer and the families their claims were adjusted in."""
    keeps: list[PairedScores] = []
    calibration: list[PairedScores] = []
    drafts = []
    for model in record.models:
        for length in record.plan.prefix_lengths:
            draft = _draft(out, record, record.lengths[(model, length)])
            drafts.append(draft)
            keeps += [step.scores for step in draft.steps]
            calibration += [*draft.gains.values(), *(draft.gate or ())]
    families = Families(Family(keeps), Family(calibration))
    return [_answer(draft, families, record.plan.delta) for draft in drafts], families


@dataclass(frozen=True)
class _Draft:
    """One model × L's paired tests before the families' adjustment."""

    record: LengthRecord
    intact: Outcomes
    steps: list[Step]
    gains: dict[int, PairedScores]
    """Per planted distance: planted − unplanted, the intact run."""
    where: dict[int, Placement]
    gate: tuple[PairedScores, PairedScores, PairedScores] | None
    """The gate's three tests (gain under the control, planted drop, unplanted drop); None: not run."""
    control: str
    simultaneous: dict[int, PairedScores]
    """Per K tried, controlled − intact with the interval simultaneous over the K tried."""


def _draft(out: Path, record: CampaignRecord, here: LengthRecord) -> _Draft:
    """The paired tests of one model × L, before the families' adjustment: each K's on the instances every
    model fitted, the planted ones on those every model could also plant."""
    model, length = here.model, here.length
    ids = record.common.get(length, frozenset())
    planted_ids = record.planted_common.get(length, frozenset())
    intact = restrict(read_outcomes(layout.length_dir(out, model, length) / "intact", length), ids)
    where = read_placements(out, model, length, here.distances, record.task)
    base = restrict(intact, planted_ids)
    planted = {
        d: read_outcomes(layout.planted_run(out, model, length, d, "intact"), length, planted_ids)
        for d in where
    }
    gains = {d: compare(base, planted[d]) for d in sorted(where)}
    gate = None
    if here.gate is not None and here.gate.distance is not None:
        d, k = here.gate.distance, here.gate.keep
        name = f"{record.plan.control}-k{k}"
        under = read_outcomes(layout.planted_run(out, model, length, d, name), length, planted_ids)
        unplanted = read_outcomes(layout.length_dir(out, model, length) / name, length, planted_ids)
        gate = (compare(unplanted, under), compare(planted[d], under), compare(base, unplanted))
    confidence = simultaneous_confidence(len(here.steps))
    control = record.plan.control
    simultaneous = {
        step.keep: controlled_scores(
            layout.control_run(out, model, length, control, step.keep), length, intact, ids, confidence
        )
        for step in here.steps
    }
    return _Draft(here, intact, here.steps, gains, where, gate, control, simultaneous)


def _answer(draft: _Draft, families: Families, delta: float) -> LengthAnswer:
    here, intact = draft.record, draft.intact
    books = len({book for _, book in intact.values()}) if intact else None
    accuracy = sum(right for right, _ in intact.values()) / len(intact) if intact else None
    answer = LengthAnswer(here.model, here.length, len(intact), books, accuracy, record=here)
    answer.keeps = keep_rows(draft.steps, families.keeps, draft.simultaneous)
    said = used_context(answer.keeps, delta)
    answer.used, answer.bound, answer.below, answer.delta_keep = (
        said.used,
        said.bound,
        said.below,
        said.delta_keep,
    )
    family = families.calibration
    for distance, gain in sorted(draft.gains.items()):
        answer.copy_rows.append(intact_row(here.length, draft.where[distance], gain, family))
    answer.horizon = copy_horizon(answer.copy_rows, here.length) if answer.copy_rows else None
    gate = here.gate
    if gate is not None and gate.distance is not None and draft.gate is not None:
        under, effect, unplanted = draft.gate
        answer.gate_row = controlled_row(
            here.length,
            draft.where[gate.distance],
            draft.control,
            gate.keep,
            under,
            effect,
            unplanted,
            family,
        )
    answer.gate_reason = _gate_reason(answer, gate.reason if gate is not None else "not run")
    return answer


@dataclass(frozen=True)
class UsedContext:
    """What the K tried allow one to say of the used context at one L (see the module docstring)."""

    used: int | None
    bound: float | None
    below: KeepRow | None
    delta_keep: int | None


def used_context(keeps: Sequence[KeepRow], delta: float) -> UsedContext:
    """The used context, its bound, the K below it and the smallest K within δ (module docstring), from
    each K tried with its claim under the page's adjustment."""
    envelope, used, bound, below, within = 0.0, None, None, None, None
    descending = sorted(keeps, key=lambda r: r.keep, reverse=True)
    for index, row in enumerate(descending):
        if row.claim.kind != "null" or row.claim.bound is None:
            return UsedContext(used, bound, row, within)
        envelope = max(envelope, row.claim.bound)
        used, bound = row.keep, envelope
        if envelope <= delta:
            within = row.keep
        below = descending[index + 1] if index + 1 < len(descending) else None
    return UsedContext(used, bound, below, within)


def keep_rows(
    steps: Sequence[Step], family: Family, simultaneous: Mapping[int, PairedScores] | None = None
) -> list[KeepRow]:
    """Each K tried with its claim and p under the family's adjustment (and its simultaneous interval,
    keyed by K, where given)."""
    wide = simultaneous or {}
    return [
        KeepRow(s.keep, s.scores, family.claim(s.scores), family.p(s.scores), wide.get(s.keep)) for s in steps
    ]


def _gate_reason(answer: LengthAnswer, reason: str) -> str:
    if answer.calibrated:
        return ""
    row = answer.gate_row
    if row is None:
        return reason
    if row.keep_last != answer.used:
        return (
            f"the gate ran at K = {row.keep_last:,} but, with the page's adjustment, the used context is "
            f"{answer.used if answer.used is not None else 'none'}"
        )
    gain_row = next((r for r in answer.copy_rows if r.distance == row.distance), None)
    if gain_row is not None and gain_row.verdict != "copies":
        return (
            f"the model was not shown to use a copy {row.distance:,} tokens back with the page's adjustment "
            f"(gain {gain_row.claim}, Holm p {p_cell(gain_row.p_adjusted)})"
        )
    if row.verdict == "partial":
        return f"part of a copy {row.distance:,} tokens back lies within the last {row.keep_last:,} tokens"
    lost = "kept its gain" if row.verdict == "misses" else "was not shown to lose it"
    at = f"{row.control} at K = {row.keep_last:,}"
    return f"a copy {row.distance:,} tokens back was used, but {at} {lost} ({row.verdict})"
