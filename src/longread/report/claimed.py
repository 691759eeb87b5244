"""The paired differences a report writes sentences for, as one family: their Holm-adjusted p-values,
the evidence each claim rests on, and the cells every such table shares (paired, the two scores, the
difference with its interval, p and the adjusted p)."""

from __future__ import annotations

from collections.abc import Sequence

from longread.metrics.claim_words import Evidence, interval, p_cell
from longread.metrics.claims import MIN_PAIRED, family_size, holm
from longread.report.paired import PairedDifference

DIFFERENCE_HEADER = "paired | {a} | {b} | difference [95% CI] | p | Holm p"
DIFFERENCE_ALIGN = "---: | ---: | ---: | ---: | ---: | ---:"


def in_family(d: PairedDifference) -> bool:
    """Does this difference get an effect-or-null sentence (enough pairs, enough books, an interval)?"""
    return d.paired >= MIN_PAIRED and not d.too_few_books and d.p is not None


def adjusted_p(differences: Sequence[PairedDifference]) -> list[float | None]:
    """Each difference's p adjusted by Holm over the family (None outside it)."""
    return holm([d.p if in_family(d) else None for d in differences])


def family_words(adjusted: Sequence[float | None]) -> str:
    """What the page says of its family: ``Holm p is adjusted over the page's 12 comparisons,
    Holm-adjusted``, or, where no row can make a claim, that none was tested."""
    k = family_size(adjusted)
    if k == 0:
        return "no row has the five books a claim needs, so none is tested (Holm p —)"
    return f"Holm p is adjusted over the page's {k} comparison{'s' if k != 1 else ''}, Holm-adjusted"


def evidence(d: PairedDifference, p_adjusted: float | None) -> Evidence:
    return Evidence(
        difference=d.difference, low=d.ci_low, high=d.ci_high, paired=d.paired, p=p_adjusted,
        only_a=d.only_first, only_b=d.only_later, too_few_books=d.too_few_books, books=d.books,
    )  # fmt: skip


def difference_cells(paired: int, first: float, later: float, difference: float, low: float, high: float,
                     p: float | None, p_adjusted: float | None) -> str:  # fmt: skip
    """The cells of :data:`DIFFERENCE_HEADER`, joined by `` | ``."""
    return (
        f"{paired} | {first:.3f} | {later:.3f} | {interval(difference, low, high, 3)} | {p_cell(p)} | "
        f"{p_cell(p_adjusted)}"
    )


def level_words(levels: Sequence[str], books_named: bool) -> str:
    """How the intervals speak, as the page says it."""
    kinds = set(levels)
    if kinds == {"books"}:
        return "speaks for books (five or more books; instances of one book are not independent)"
    if "books" in kinds:
        return "speaks for books where a comparison spans five or more books, else for the instances"
    why = "fewer than five books" if books_named else "the rows name no book"
    return f"speaks for these instances only ({why})"
