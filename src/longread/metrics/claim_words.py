"""The words of a claim: how every report writes a p-value, a signed number, an interval and the one
sentence a reader can quote about a paired difference — written once, by the rule of
:mod:`longread.metrics.claims`."""

from __future__ import annotations

from dataclasses import dataclass

from longread.metrics.claims import ALPHA, Claim, claim, plan_for
from longread.metrics.paired import MIN_BOOKS

PLANNED_BOUND = 0.05
"""The null bound every null's sentence plans for (what more data would buy)."""

USES = ("the model uses the distant context", "the model does better without it")


def p_cell(p: float | None) -> str:
    """A p-value in a table cell: ``< 0.001``, ``0.125`` or ``—``."""
    if p is None:
        return "—"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def p_text(p: float | None, adjusted: bool = True) -> str:
    """A p-value in a sentence: ``Holm-adjusted p = 0.125`` (or ``p < 0.001``)."""
    if p is None:
        return ""
    name = "Holm-adjusted p" if adjusted else "p"
    return f"{name} < 0.001" if p < 0.001 else f"{name} = {p:.3f}"


def signed(value: float | None, digits: int = 2) -> str:
    """``+0.05`` / ``−0.10`` (a true minus sign), ``—`` for none."""
    return "—" if value is None else f"{value:+.{digits}f}".replace("-", "−")


def interval(value: float | None, low: float | None, high: float | None, digits: int = 2) -> str:
    """``+0.80 [+0.53, +1.00]``."""
    return f"{signed(value, digits)} [{signed(low, digits)}, {signed(high, digits)}]"


@dataclass(frozen=True)
class Evidence:
    """One paired difference as a report holds it, with the family-adjusted p its claim uses."""

    difference: float
    low: float
    high: float
    paired: int
    p: float | None
    """Holm-adjusted over the report's family (None: no test)."""
    only_a: int | None = None
    """Right/wrong metrics: pairs right only in the first (intact, full) run."""
    only_b: int | None = None
    too_few_books: bool = False
    books: int | None = None

    @property
    def discordant(self) -> int | None:
        return None if self.only_a is None or self.only_b is None else self.only_a + self.only_b

    def claim(self) -> Claim:
        return claim(self.low, self.high, self.p, self.paired, discordant=self.discordant,
                     too_few_books=self.too_few_books)  # fmt: skip


def sentence(what: str, metric: str, evidence: Evidence, higher_is_better: bool,
             meanings: tuple[str, str] = USES) -> str:  # fmt: skip
    """One quotable sentence on one paired difference (values as fractions for right/wrong metrics):
    ``what`` names the change ("replacing everything before the last 256 tokens"), ``meanings`` what a
    worse and a better score mean."""
    e = evidence
    said = e.claim()
    span = interval(e.difference, e.low, e.high)
    p_part = "" if e.p is None else f", {p_text(e.p)}"
    if said.kind == "too few":
        change = signed(e.difference)
        return f"{what} changes {metric} by {change} on {e.paired} paired instance(s): too few to say"
    if said.kind == "too few books":
        return (
            f"{what} changes {metric} by {span} on these {e.paired} instances ({e.books} books: too few "
            "books to claim; the interval is instance-level and speaks for these instances only)"
        )
    changed = _changed(e)
    if said.kind == "null":
        assert said.bound is not None
        return (
            f"{what} changes {metric} by no more than ±{said.bound:.2f} (95%; difference {span}{p_part}, "
            f"{e.paired} paired{changed}){_more(e, said.bound)}"
        )
    verb = "lowers" if e.difference < 0 else "raises"
    if said.kind == "not established":
        why = "the interval holds 0" if e.low <= 0 <= e.high else f"the {p_text(e.p)} is not below {ALPHA}"
        return f"{what} {verb} {metric} by {span}{p_part}: not established ({why})"
    worse = (e.difference < 0) == higher_is_better
    near, far = sorted((abs(e.low), abs(e.high)))
    size = f"{abs(e.difference):.2f} [{near:.2f}, {far:.2f}]"
    meaning = meanings[0] if worse else meanings[1]
    return f"{what} {verb} {metric} by {size}{'' if e.p is None else f' ({p_text(e.p)})'}: {meaning}"


def _more(e: Evidence, bound: float) -> str:
    """``; ruling out ±0.05 would take about 640 paired instances (160 books)`` where the bound is wider."""
    if bound <= PLANNED_BOUND:
        return ""
    by_book = e.books is not None and e.books >= MIN_BOOKS
    plan = plan_for(PLANNED_BOUND, e.paired, e.low, e.high, e.books, by_book)
    if plan.instances is None:
        return ""
    books = f" ({plan.books:,} books)" if plan.books is not None else ""
    return f"; ruling out ±{PLANNED_BOUND:g} would take about {plan.instances:,} paired instances{books}"


def _changed(e: Evidence) -> str:
    """``; 20 of 20 answers changed, 10 each way`` where pairs differ (a null on cancelling changes)."""
    if e.only_a is None or e.only_b is None or e.only_a + e.only_b == 0:
        return ""
    return f"; {e.only_a + e.only_b} of {e.paired} answers changed ({e.only_a} lost, {e.only_b} gained)"
