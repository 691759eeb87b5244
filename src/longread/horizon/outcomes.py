"""A horizon run's answers as the comparisons need them, and the instances every model fitted.

An instance is *fitted* at length L by a model when its intact run scored it reading all L tokens (a
ChapterBreak prefix held at least L of the model's tokens, or a NarrativeXL window was filled; the
window held them and what is scored after them, and no error stopped it). Every comparison of a
campaign is made on the instances all its models fitted at L (NoCha's rule: models compared on the same
items); what each model left out, and why, is counted for the report.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longread.calibration.verdicts import Outcomes
from longread.runs.layout import read_samples

PLANTED_MARK = "#planted-d"


def original_id(instance: str) -> str:
    """A planted instance's unplanted id (``x#planted-d512`` → ``x``)."""
    return instance.split(PLANTED_MARK, 1)[0]


def read_outcomes(
    run: Path, length: int, only: Collection[str] | None = None
) -> dict[tuple[str, int], tuple[bool, str]]:
    """(unplanted id, L) → (right?, book) of a run's rows at L, on ``only``'s ids where given."""
    found: dict[tuple[str, int], tuple[bool, str]] = {}
    if not run.is_dir():
        return found
    for row in read_samples(run):
        if length_of(row) != length:
            continue
        source = original_id(str(row["id"]))
        if only is None or source in only:
            found[(source, length)] = (bool(row["correct"]), str(row["book_id"]))
    return found


def length_of(row: Mapping[str, Any]) -> int:
    """The L a row was read at: ChapterBreak's ``prefix_length``, NarrativeXL's ``window``."""
    return int(row["prefix_length"] if "prefix_length" in row else row["window"])


def read_of(row: Mapping[str, Any]) -> int:
    """The tokens a row read: ChapterBreak's ``context_tokens_kept``, NarrativeXL's ``tokens_seen``."""
    return int(row.get("context_tokens_kept", row.get("tokens_seen")) or 0)


@dataclass(frozen=True)
class Fitted:
    ids: frozenset[str]
    """Scored reading all L tokens."""
    short: int
    """Scored, but fewer than L tokens were read (a prefix shorter than L, or a window too small)."""
    failed: int
    """Not scored (an error named in the run's errors.jsonl)."""


def fitted(run: Path, length: int, chosen: Collection[str]) -> Fitted:
    ids: set[str] = set()
    short = 0
    for row in read_samples(run):
        if length_of(row) != length:
            continue
        if read_of(row) >= length:
            ids.add(str(row["id"]))
        else:
            short += 1
    return Fitted(frozenset(ids), short, len(set(chosen)) - len(ids) - short)


def common(fits: Mapping[str, Fitted]) -> frozenset[str]:
    """The ids every model fitted."""
    sets = [fit.ids for fit in fits.values()]
    return frozenset.intersection(*sets) if sets else frozenset()


def restrict(outcomes: Outcomes, ids: Collection[str]) -> Outcomes:
    return {key: value for key, value in outcomes.items() if key[0] in ids}
