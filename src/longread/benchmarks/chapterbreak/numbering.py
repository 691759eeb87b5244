"""Give every candidate the gold's chapter number, so no candidate leaks its position.

"CHAPTER XVII. The Storm" as a negative for gold "CHAPTER III." becomes
"CHAPTER III. The Storm": numbers in the heading's label (roman, arabic, words,
ordinals, "9. Chapter 12" forms) take the gold's values in the gold's forms; the
chapter's own title stays.
"""

from __future__ import annotations

from longread.documents.headings import NumberSpan, label_numbers


def heading_label(heading: str) -> str | None:
    """The part of a heading up to and including its last label number ("CHAPTER XII" of "CHAPTER XII. X")."""
    spans = label_numbers(heading)
    if not spans:
        return None
    return heading[: spans[-1].end]


def is_numbered(heading: str) -> bool:
    return bool(label_numbers(heading))


def rewrite_heading_numbers(heading: str, gold_heading: str) -> str:
    """``heading`` with each label number replaced by the gold's number at the same place.

    The k-th label number takes the gold's k-th (the gold's last when the gold has
    fewer), written in the gold's form. A heading without label numbers is returned
    unchanged; callers only pair numbered with numbered headings.
    """
    gold = label_numbers(gold_heading)
    spans = label_numbers(heading)
    if not gold or not spans:
        return heading
    pieces: list[str] = []
    cursor = 0
    for k, span in enumerate(spans):
        source: NumberSpan = gold[min(k, len(gold) - 1)]
        pieces.append(heading[cursor : span.start])
        pieces.append(gold_heading[source.start : source.end])
        cursor = span.end
    pieces.append(heading[cursor:])
    return "".join(pieces)


def label_values(heading: str) -> list[int]:
    """The values of a heading's label numbers (what a test compares between candidates)."""
    return [span.value for span in label_numbers(heading)]


__all__ = ["heading_label", "is_numbered", "label_values", "rewrite_heading_numbers"]
