"""Simulated horizon searches of known truth, to measure how often the used-context sentence errs.

One **replicate** is a whole campaign at one prefix length L for one model: books of instances, each
book a difficulty (``logit p_g = logit(base) + N(0, 0.5²)``, as :mod:`longread.metrics.simulation`)
and a share ``π_g`` of instances whose answer uses something read before the end (``π`` for every book,
or ``π·exp(N(0, 0.5²))`` with heterogeneity). Such an instance lies at a **reach** R (how far back what it
uses lies, drawn by the :class:`Reach`) and its intact answer is right with ``min(p_g + lift, 1)``;
the others with ``p_g``. Under the control at K an instance with ``R > K`` loses what it used: its answer
is drawn again with ``p_g`` (from the same uniform in 60% of instances, :data:`~longread.metrics.
simulation.TOGETHER`); every other instance's answer is drawn afresh with its own intact rate with
probability ``noise`` (a control moves answers even where nothing it removed was used; the mean stays;
at 0.15 about 6% of such answers change).
So the true difference at K is ``−E[π_g (min(p_g + lift, 1) − p_g)] · P(R > K)``, zero from the
reach's farthest point up.

The campaign is the real one: :func:`longread.horizon.search.search_keep` picks the K (the log grid
down, then bisection), every K is :func:`longread.metrics.paired.paired_scores` against the intact run
by book, the page's Holm family adjusts them and :func:`longread.horizon.verdicts.used_context` says what
the page would. A replicate **errs** when the page claims an effect at a K where the truth is 0 or of the
other sign; when a null's bound (the used context's: the widest of its chain) is smaller than the true
difference at some K of that chain, or a K the page says is within ±δ is not; or when the interval it
prints for the next K below (picked by the search, so simultaneous over the K tried) misses the truth.
The sentences' words themselves (:mod:`longread.horizon.words`) are not run; what they state is. Each
replicate also counts the runs the other search order (``descend`` or ``zero-first``) takes on the same
answers: a K's answers are drawn once per replicate, so both orders read the same campaign.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit

from longread.calibration.verdicts import Family
from longread.horizon.plan import keep_grid
from longread.horizon.search import search_keep
from longread.horizon.verdicts import KeepRow, UsedContext, keep_rows, simultaneous_confidence, used_context
from longread.metrics.paired import PairedScores, paired_scores
from longread.metrics.simulation import DIFFICULTY_SD, TOGETHER, TRUTH_BOOKS, Design

SHARE_SD = 0.5
"""Book-to-book spread of the share of instances that use what lies before the end (log scale)."""
STEP = 16
"""The bisection's step, as the campaign's."""


@dataclass(frozen=True)
class Reach:
    """Where what an instance uses lies: ``share`` of instances use something ``low``–``high`` tokens back
    (uniform, or log-uniform with ``log``), and it raises their chance of a right answer by ``lift``."""

    name: str
    share: float
    lift: float
    low: int
    high: int
    log: bool = False

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        if self.low == self.high:
            return np.full(size, float(self.low))
        if self.log:
            return np.exp(rng.uniform(np.log(self.low), np.log(self.high), size))
        return rng.uniform(self.low, self.high, size)

    def beyond(self, keep: int) -> float:
        """P(R > keep): the share of users a control at ``keep`` takes their information from."""
        if self.share == 0 or keep >= self.high:
            return 0.0
        if keep < self.low:
            return 1.0
        if self.log:
            return float(np.log(self.high / keep) / np.log(self.high / self.low))
        return (self.high - keep) / (self.high - self.low)


@dataclass(frozen=True)
class Cell:
    design: Design
    base: float
    reach: Reach
    heterogeneous: bool
    length: int = 1024
    min_keep: int = 32
    refine: int = 2
    delta: float = 0.05
    noise: float = 0.15
    zero_first: bool = False
    """Search K = 0 first (``--search zero-first``)."""


def _book_rates(rng: np.random.Generator, books: int, cell: Cell) -> tuple[np.ndarray, np.ndarray]:
    p = expit(logit(cell.base) + DIFFICULTY_SD * rng.standard_normal(books))
    share = np.full(books, cell.reach.share)
    if cell.heterogeneous:
        share = np.clip(share * np.exp(SHARE_SD * rng.standard_normal(books)), 0.0, 1.0)
    return p, share


def loss_per_user(cell: Cell, seed: int = 12345) -> float:
    """``E[π_g (min(p_g + lift, 1) − p_g)]`` over 200,000 simulated books: the true difference at a K that
    takes every user's information away."""
    p, share = _book_rates(np.random.default_rng(seed), TRUTH_BOOKS, cell)
    return float(np.mean(share * (np.minimum(p + cell.reach.lift, 1.0) - p)))


def truth(cell: Cell, keep: int, loss: float) -> float:
    """The true difference (controlled − intact) at ``keep``."""
    return -loss * cell.reach.beyond(keep)


@dataclass(frozen=True)
class Outcome:
    """What the page said in one replicate, and whether it erred."""

    rows: list[KeepRow]
    said: UsedContext
    false_effect: bool
    """An effect claimed at a K where the truth is 0, or of the other sign than the truth (type I or S)."""
    below_truth: bool
    """The used context's bound is smaller than the true |difference| at some K of its chain, or a K
    said to be within δ (from ``delta_keep`` up) is not."""
    picked_missed: bool | None
    """The next K below's interval as the page prints it (simultaneous over the K tried) misses the truth
    (None: no K below)."""
    picked_missed_plain: bool | None
    """The same K's plain 95% interval misses it: what the page would state without the correction."""
    other_runs: int = 0
    """The runs the other search (descend ↔ zero-first) would have taken on the same campaign."""

    @property
    def runs(self) -> int:
        """The control runs the search took (every K tried)."""
        return len(self.rows)

    @property
    def erred(self) -> bool:
        return self.false_effect or self.below_truth or bool(self.picked_missed)


def replicate(rng: np.random.Generator, cell: Cell, loss: float) -> Outcome:
    """One simulated campaign (module docstring) and what its page says."""
    measure = _instances(rng, cell)
    grid = keep_grid(cell.length, cell.min_keep)
    steps = search_keep(measure, cell.length, grid, cell.refine, STEP, cell.zero_first)
    rows = keep_rows(steps, Family([s.scores for s in steps]))
    said = used_context(rows, cell.delta)
    wrong = any(r.claim.kind == "effect" and _wrong_effect(r, truth(cell, r.keep, loss)) for r in rows)
    picked, plain = None, None
    if said.below is not None:  # the page prints its interval simultaneous over the K tried
        true = truth(cell, said.below.keep, loss)
        wide = measure(said.below.keep, simultaneous_confidence(len(steps)))
        narrow = said.below.scores
        picked = not wide.ci_low <= true <= wide.ci_high
        plain = not narrow.ci_low <= true <= narrow.ci_high
    other = len(search_keep(measure, cell.length, grid, cell.refine, STEP, not cell.zero_first))
    return Outcome(rows, said, wrong, _below_truth(cell, rows, said, loss), picked, plain, other)


def _wrong_effect(row: KeepRow, true: float) -> bool:
    return true == 0 or (true > 0) != (row.scores.difference > 0)


def _below_truth(cell: Cell, rows: list[KeepRow], said: UsedContext, loss: float) -> bool:
    if said.used is None or said.bound is None:
        return False
    bound, used = said.bound, said.used
    chain = [r.keep for r in rows if r.keep >= used]
    if any(abs(truth(cell, k, loss)) > bound for k in chain):
        return True
    within = [k for k in chain if said.delta_keep is not None and k >= said.delta_keep]
    return any(abs(truth(cell, k, loss)) > cell.delta for k in within)


def _instances(rng: np.random.Generator, cell: Cell) -> Callable[..., PairedScores]:
    """The intact answers of one replicate and the measure of a control at K against them."""
    codes = cell.design.codes
    p, share = _book_rates(rng, cell.design.books, cell)
    n = cell.design.n
    uses = rng.random(n) < share[codes]
    reach = cell.reach.draw(rng, n)
    rate = np.where(uses, np.minimum(p[codes] + cell.reach.lift, 1.0), p[codes])
    shared = rng.random(n)
    intact = shared < rate
    again = np.where(rng.random(n) < TOGETHER, shared, rng.random(n)) < p[codes]
    books = [f"book-{c}" for c in codes]
    first = [bool(x) for x in intact]
    noise = rng.random((cell.length + 1, n)) < cell.noise
    fresh = rng.random((cell.length + 1, n)) < rate

    measured: dict[tuple[int, float], PairedScores] = {}

    def measure(keep: int, confidence: float = 0.95) -> PairedScores:
        if (keep, confidence) not in measured:  # fixed draws: the same K gives the same answers
            lost = uses & (reach > keep)
            moved = np.where(noise[keep], fresh[keep], intact)
            controlled = [bool(x) for x in np.where(lost, again, moved)]
            scores = paired_scores(first, controlled, clusters=books, confidence=confidence)
            measured[keep, confidence] = scores
        return measured[keep, confidence]

    return measure


def naive_errs(cell: Cell, outcome: Outcome, loss: float) -> bool:
    """The naive rule on the same search: K is "unchanged" where |difference| ≤ δ, the used context the
    smallest K of an unbroken run of those from the top; wrong where some K of that run truly moves > δ."""
    chain = []
    for row in sorted(outcome.rows, key=lambda r: r.keep, reverse=True):
        if abs(row.scores.difference) > cell.delta:
            break
        chain.append(row.keep)
    return any(abs(truth(cell, k, loss)) > cell.delta for k in chain)
