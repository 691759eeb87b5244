"""The calibration's rows and verdicts from the outcomes of its runs.

Four sets of runs on the same instances: unplanted and planted, each intact and under every control × K.
Every comparison is paired by the unplanted instance a planted one was made from (and the prefix length),
its interval a book-level cluster bootstrap and its p McNemar's exact test
(:mod:`longread.metrics.paired`); what it lets one claim follows :mod:`longread.metrics.claims`.

- An ``intact`` row per prefix length × distance D: ``planted_gain`` = planted − unplanted accuracy.
- A controlled row per prefix length × D × control × K: ``planted_gain`` under the control (planted and
  unplanted read under the same control) and ``control_effect`` = planted under the control − planted
  intact; beside them ``unplanted_effect`` = unplanted under the control − unplanted intact (what the
  control does where nothing was planted: the ordinary context-use measurement). Where the copy lies:
  ``perturbed`` (K ≤ D − copy for every instance: the control reaches all of it), ``kept`` (K ≥ D for
  every instance: none of it), else ``partly``. The verdict:

  - perturbed: ``misses`` when the gain is still established under the control, ``detects`` when it is
    not and the control's drop of the planted score is, else ``inconclusive``;
  - kept: ``false alarm`` when the control moves the planted score (an established effect) though it
    perturbed nothing planted, ``keeps`` when the gain stays established, else ``inconclusive``;
  - partly: ``partial`` (no expectation: part of the copy is perturbed).

Every test of the page (each row's gain, control effect and unplanted effect) is one family: its p-values
are adjusted together by Holm (:class:`Family`), and each claim and verdict uses the adjusted p.

The copy horizon (per prefix length): the largest D such that the intact gain is established (an effect
by the rule, its own p < 0.01) at **every** distance tried up to it — RULER's effective length reads the
same way — the next D tried bounding it from above; a distance farther out that is found again after a
gap is reported as a gap, never as the horizon. A backend that cut its context shows a short horizon.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from longread.files import finite_or_none
from longread.metrics.claims import MIN_PAIRED, Claim, claim, family_size, holm
from longread.metrics.paired import PairedScores, paired_scores

HORIZON_P = 0.01
"""The copy horizon's distances need an intact gain established by the rule (Holm-adjusted p < 0.05, its
interval above 0) whose own p is below this."""
SEED = 0

Outcomes = Mapping[tuple[str, int], tuple[bool, str]]
"""(unplanted instance id, prefix length) → (right?, book)."""


@dataclass(frozen=True)
class Placement:
    """Where the copies of one distance lie, over the instances planted with it."""

    distance: int
    nearest: int
    """The smallest distance in tokens as planted."""
    farthest: int
    copy_tokens: int
    """The longest copy (tokens)."""


@dataclass(frozen=True)
class CalibrationRow:
    prefix_length: int
    distance: int
    control: str
    keep_last: int | None
    position: str
    """intact, perturbed, kept or partly (see the module docstring)."""
    paired: int
    books: int | None
    unplanted: float
    planted: float
    planted_gain: float
    ci_low: float
    ci_high: float
    p: float | None
    claim: str
    control_effect: float | None
    control_ci_low: float | None
    control_ci_high: float | None
    control_p: float | None
    control_claim: str | None
    verdict: str
    unplanted_effect: float | None = None
    """Unplanted under the control − unplanted intact: what the control does where nothing was planted."""
    unplanted_ci_low: float | None = None
    unplanted_ci_high: float | None = None
    unplanted_p: float | None = None
    unplanted_claim: str | None = None
    p_adjusted: float | None = None
    """The gain's p, Holm-adjusted over the page's family (what its claim uses)."""
    control_p_adjusted: float | None = None
    unplanted_p_adjusted: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return finite_or_none(asdict(self))


def compare(first: Outcomes, later: Outcomes, confidence: float = 0.95) -> PairedScores:
    """later − first on the keys both hold (sorted, so the result does not depend on file order)."""
    keys = sorted(set(first) & set(later))
    return paired_scores(
        [first[k][0] for k in keys],
        [later[k][0] for k in keys],
        clusters=[first[k][1] for k in keys],
        confidence=confidence,
    )


class Family:
    """The tests of one page, adjusted together by Holm: each claim uses its test's adjusted p."""

    def __init__(self, tests: Sequence[PairedScores | None]) -> None:
        present = [t for t in tests if t is not None]
        adjusted = holm([t.p if t.n >= MIN_PAIRED and not t.too_few_books else None for t in present])
        self._adjusted = {id(t): p for t, p in zip(present, adjusted, strict=True)}
        self._tests = present  # kept alive: the ids above stay theirs
        self.size = family_size(adjusted)

    def p(self, scores: PairedScores) -> float | None:
        return self._adjusted.get(id(scores), scores.p)

    def claim(self, scores: PairedScores) -> Claim:
        return claim(scores.ci_low, scores.ci_high, self.p(scores), scores.n, discordant=scores.discordant,
                     too_few_books=scores.too_few_books)  # fmt: skip


def _established(scores: PairedScores, family: Family) -> bool:
    return family.claim(scores).kind == "effect"


def position_of(keep_last: int, placement: Placement) -> str:
    if keep_last >= placement.farthest:
        return "kept"
    if keep_last <= placement.nearest - placement.copy_tokens:
        return "perturbed"
    return "partly"


def verdict_of(position: str, gain: PairedScores, effect: PairedScores, family: Family) -> str:
    if position == "partly":
        return "partial"
    gain_holds = _established(gain, family) and gain.difference > 0
    moved = _established(effect, family)
    if position == "perturbed":
        if gain_holds:
            return "misses"
        return "detects" if moved and effect.difference < 0 else "inconclusive"
    if moved:
        return "false alarm"
    return "keeps" if gain_holds else "inconclusive"


def intact_row(length: int, placement: Placement, gain: PairedScores, family: Family) -> CalibrationRow:
    said = family.claim(gain).kind
    copies = said == "effect" and gain.difference > 0
    row = CalibrationRow(
        length, placement.distance, "intact", None, "intact", gain.n, gain.clusters, gain.mean_a, gain.mean_b,
        gain.difference, gain.ci_low, gain.ci_high, gain.p, said, None, None, None, None, None,
        "copies" if copies else "no gain established",
    )  # fmt: skip
    return replace(row, p_adjusted=family.p(gain))


def controlled_row(
    length: int,
    placement: Placement,
    control: str,
    keep: int,
    gain: PairedScores,
    effect: PairedScores,
    unplanted: PairedScores,
    family: Family,
) -> CalibrationRow:
    position = position_of(keep, placement)
    row = CalibrationRow(
        length, placement.distance, control, keep, position, gain.n, gain.clusters, gain.mean_a, gain.mean_b,
        gain.difference, gain.ci_low, gain.ci_high, gain.p, family.claim(gain).kind,
        effect.difference, effect.ci_low, effect.ci_high, effect.p, family.claim(effect).kind,
        verdict_of(position, gain, effect, family),
    )  # fmt: skip
    return replace(
        row,
        unplanted_effect=unplanted.difference,
        unplanted_ci_low=unplanted.ci_low,
        unplanted_ci_high=unplanted.ci_high,
        unplanted_p=unplanted.p,
        unplanted_claim=family.claim(unplanted).kind,
        p_adjusted=family.p(gain),
        control_p_adjusted=family.p(effect),
        unplanted_p_adjusted=family.p(unplanted),
    )


@dataclass(frozen=True)
class Horizon:
    prefix_length: int
    distance: int | None
    """The largest distance up to which every planted copy tried is used (None: not even the nearest)."""
    below: int | None
    """The next distance tried, where the copy was no longer shown to be used (None: none tried)."""
    gain: float | None
    ci_low: float | None
    ci_high: float | None
    p: float | None
    """The gain's p at ``distance`` (its Holm-adjusted p is below 0.05: an effect by the rule)."""
    found_beyond: tuple[int, ...] = ()
    """Distances past ``below`` where the copy was found again: a gap, never the horizon."""


def copy_shown(p: float | None, ci_low: float) -> bool:
    """A planted gain the copy horizon counts, by its own test: p below :data:`HORIZON_P`, the interval
    above 0 (the page's family adjusts it again)."""
    return p is not None and p < HORIZON_P and ci_low > 0


def _used(row: CalibrationRow) -> bool:
    """The copy is used at this distance: an effect by the page's rule (Holm-adjusted p < 0.05, the
    interval above 0) whose own p is also below :data:`HORIZON_P`."""
    return copy_shown(row.p, row.ci_low) and row.claim == "effect"


def copy_horizon(rows: Sequence[CalibrationRow], length: int) -> Horizon:
    """The copy horizon at one prefix length (see the module docstring)."""
    intact = sorted(
        (r for r in rows if r.control == "intact" and r.prefix_length == length), key=lambda r: r.distance
    )
    best: CalibrationRow | None = None
    below: int | None = None
    for row in intact:
        if not _used(row):
            below = row.distance
            break
        best = row
    beyond = tuple(r.distance for r in intact if below is not None and r.distance > below and _used(r))
    if best is None:
        return Horizon(length, None, below, None, None, None, None, beyond)
    return Horizon(length, best.distance, below, best.planted_gain, best.ci_low, best.ci_high, best.p,
                   beyond)  # fmt: skip
