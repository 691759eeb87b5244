"""Accuracy with Wilson score intervals, overall and per group (prefix length, any row field).

Convention for "no data": n = 0 gives an accuracy and bounds of NaN — there is
no evidence and hence no interval — rather than an error, so a summary over an
empty group can still be written (``RunDir.write_results`` stores NaN as null).
Invalid counts (negative, more successes than trials) are errors.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

Row = Mapping[str, Any]
GroupKey = str | Callable[[Row], Hashable]


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion (successes out of n).

    Unlike the normal (Wald) interval it stays inside [0, 1] and is sensible
    at 0/n and n/n. 8/10 at 95 % gives (0.4902, 0.9433). n = 0 gives (nan, nan).
    """
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n; got successes={successes}, n={n}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1; got {confidence}")
    if n == 0:
        return (math.nan, math.nan)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / n
    z2_n = z * z / n
    centre = (p + z2_n / 2) / (1 + z2_n)
    half_width = z / (1 + z2_n) * math.sqrt(p * (1 - p) / n + z2_n / (4 * n))
    low = 0.0 if successes == 0 else max(0.0, centre - half_width)
    high = 1.0 if successes == n else min(1.0, centre + half_width)
    return (low, high)


@dataclass(frozen=True)
class AccuracySummary:
    """Accuracy of n binary outcomes with its Wilson interval (NaN when n = 0)."""

    n: int
    correct: int
    accuracy: float
    ci_low: float
    ci_high: float

    @classmethod
    def from_counts(cls, correct: int, n: int, confidence: float = 0.95) -> AccuracySummary:
        low, high = wilson_interval(correct, n, confidence)
        return cls(n=n, correct=correct, accuracy=correct / n if n else math.nan, ci_low=low, ci_high=high)

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def accuracy_of(
    rows: Iterable[Row], correct_key: str = "correct", confidence: float = 0.95
) -> AccuracySummary:
    outcomes = [_outcome(row, correct_key) for row in rows]
    return AccuracySummary.from_counts(sum(outcomes), len(outcomes), confidence)


def accuracy_by(
    rows: Iterable[Row],
    group_key: GroupKey,
    correct_key: str = "correct",
    confidence: float = 0.95,
) -> dict[Hashable, AccuracySummary]:
    """Accuracy per group, groups in sorted order (numbers numerically, then text).

    ``group_key`` is a row field (a dotted path such as ``"metadata.source"``
    reaches into nested dicts) or a function of the row. ``correct_key`` holds a
    bool or 0/1.
    """
    get_group = group_key if callable(group_key) else _field_getter(group_key)
    outcomes: dict[Hashable, list[int]] = {}
    for row in rows:
        outcomes.setdefault(get_group(row), []).append(_outcome(row, correct_key))
    return {
        group: AccuracySummary.from_counts(sum(outcomes[group]), len(outcomes[group]), confidence)
        for group in sorted(outcomes, key=group_sort_key)
    }


def group_sort_key(group: Hashable) -> tuple[int, float, str]:
    """Numbers first in numeric order (so 1024 follows 512), then everything else as text.

    A label that starts with a number (a bucket such as ``2–3`` or ``64+``) sorts by that number.
    """
    if isinstance(group, int | float) and not isinstance(group, bool):
        return (0, float(group), "")
    leading = re.match(r"\d+(?:\.\d+)?", str(group))
    if leading is not None:
        return (0, float(leading.group()), str(group))
    return (1, 0.0, str(group))


def _field_getter(path: str) -> Callable[[Row], Hashable]:
    def get(row: Row) -> Hashable:
        if path in row:
            value = row[path]
        else:
            value = row
            for part in path.split("."):
                if not isinstance(value, Mapping) or part not in value:
                    raise KeyError(f"row {row.get('key', '?')!r} has no field {path!r}")
                value = value[part]
        if not isinstance(value, Hashable):
            raise TypeError(f"row {row.get('key', '?')!r}: field {path!r} is a {type(value).__name__}")
        return value

    return get


def _outcome(row: Row, correct_key: str) -> int:
    value = row.get(correct_key)
    if isinstance(value, bool) or value in (0, 1):
        return int(value)
    raise ValueError(f"row {row.get('key', '?')!r}: {correct_key!r} must be a bool or 0/1; got {value!r}")
