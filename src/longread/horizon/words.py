"""The sentences of a horizon page: one per model × prefix length, no larger than its claims allow."""

from __future__ import annotations

from longread.horizon.verdicts import KeepRow, LengthAnswer
from longread.metrics.claim_words import interval, p_text
from longread.metrics.claims import plan_for
from longread.metrics.paired import book_level

VERBS = {"shuffle": "shuffling", "replace": "replacing", "none": "dropping"}


def answer_sentence(a: LengthAnswer, control: str, delta: float, chance: float | None = None) -> str:
    """The model × L's sentence; ``chance`` (the instances' chance accuracy) adds a warning where the
    intact run is no better: a control cannot lower what is already at the floor."""
    said = _sentence(a, control, delta)
    if chance is None or a.intact is None or a.paired == 0 or a.intact > chance:
        return said
    return (
        f"{said} Its intact accuracy, {a.intact:.3f}, is no better than chance ({chance:.3f}), so a control "
        "had little to lower: the answers read as the intact run's mostly because they were wrong either way."
    )


def _sentence(a: LengthAnswer, control: str, delta: float) -> str:
    verb = VERBS.get(control, control)
    where = f"At L = {a.length:,}"
    if a.paired == 0:
        return f"{where}, no instance was fitted by every model: nothing is compared."
    counts = f"{a.paired:,} instances, {a.books or 0:,} books"
    if a.used is None:
        first = a.below
        assert first is not None
        if first.claim.kind == "effect":
            return (
                f"{where}, {a.model}'s answers depend on more than its last {first.keep:,} tokens, the "
                f"largest K tried ({counts}): {_row_words(first, verb, len(a.keeps))}."
            )
        return (
            f"{where}, use of what {a.model} read before its last {first.keep:,} tokens, the largest K "
            f"tried, could not be ruled out ({counts}): {_row_words(first, verb, len(a.keeps))}."
        )
    bound = _bound_words(a, delta)
    below = f"; {_row_words(a.below, verb, len(a.keeps))}" if a.below is not None else ""
    if a.calibrated:
        row = a.gate_row
        assert row is not None and row.control_effect is not None
        gain = next(r for r in a.copy_rows if r.distance == row.distance)
        what = "none of its prefix" if a.used == 0 else f"no more than its last {a.used:,} tokens"
        return (
            f"{where}, {a.model}'s answers depend on {what} ({bound}; {counts}){below}. The instrument "
            f"sees use beyond {a.used:,}: a copy of the answer planted {row.distance:,} tokens back raises "
            f"accuracy by {interval(gain.planted_gain, gain.ci_low, gain.ci_high)} with the whole prefix, "
            f"and {_all_but(verb, a.used)} loses it "
            f"({interval(row.control_effect, row.control_ci_low, row.control_ci_high)})."
        )
    last = f"all but {a.model}'s last {a.used:,} tokens"
    what = f"{verb} {a.model}'s whole prefix" if a.used == 0 else f"{verb} {last}"
    return (
        f"{where}, {what} changes accuracy by no more than {bound} "
        f"({counts}){below}; but the instrument could not tell whether it would see use beyond {a.used:,} "
        f"({a.gate_reason}), so this is not read as {_depends(a.used)}."
    )


def _all_but(verb: str, keep: int) -> str:
    return f"{verb} the whole prefix" if keep == 0 else f"{verb} all but the last {keep:,} tokens"


def _depends(used: int) -> str:
    return (
        '"depends on none of its prefix"'
        if used == 0
        else f'"depends on no more than its last {used:,} tokens"'
    )


def _bound_words(a: LengthAnswer, delta: float) -> str:
    assert a.bound is not None
    if a.bound <= delta:
        return f"±{a.bound:.2f}, within the ±{delta:g} asked"
    chain = [r for r in a.keeps if a.used is not None and r.keep >= a.used and r.claim.bound is not None]
    row = max(chain, key=lambda r: r.claim.bound or 0.0)  # the widest null decides the bound
    by_book = book_level(a.books)
    plan = plan_for(delta, row.scores.n, row.scores.ci_low, row.scores.ci_high, a.books, by_book)
    more = ""
    if plan.instances is not None:
        books = f" from about {plan.books:,} books" if plan.books is not None else ""
        more = f"; ruling out ±{delta:g} would take about {plan.instances:,} instances{books}"
    within = "" if a.delta_keep is None else f"; within ±{delta:g} from K = {a.delta_keep:,}"
    return (
        f"±{a.bound:.2f}, the smallest these data allow here, wider than the ±{delta:g} asked{more}{within}"
    )


def _row_words(row: KeepRow, verb: str, tried: int) -> str:
    """The next K below the used context, picked by the search: its interval is the one simultaneous
    over the ``tried`` K (where the row has it), and says so."""
    s = row.scores
    wide = row.simultaneous if row.simultaneous is not None else s
    low, high = wide.ci_low, wide.ci_high
    span = interval(s.difference, low, high)
    which = (
        f"; the interval holds over all {tried} K tried" if row.simultaneous is not None and tried > 1 else ""
    )
    p = "" if row.p_adjusted is None else f", {p_text(row.p_adjusted)}"
    what = _all_but(verb, row.keep)
    kind = row.claim.kind
    if kind == "effect":
        moves = "lowers" if s.difference < 0 else "raises"
        if low <= 0 <= high:  # the simultaneous interval reaches 0: the signed form, not "by x [a, b]"
            return f"{what} {moves} accuracy ({span}{p}{which}): use shown"
        near, far = sorted((abs(low), abs(high)))
        return (
            f"{what} {moves} accuracy by {abs(s.difference):.2f} [{near:.2f}, {far:.2f}]{p}{which}: use shown"
        )
    if kind == "null":
        return f"{what} changes accuracy by no more than ±{row.claim.bound:.2f} ({span}{p})"
    if kind == "too few books":
        return f"{what} changes accuracy by {span} ({s.clusters} books: too few books to claim{which})"
    if kind == "too few":
        return f"{what} changes accuracy by {span} on {s.n} instances: too few to say"
    return f"{what} changes accuracy by {span}{p}{which}: use not ruled out (not established)"
