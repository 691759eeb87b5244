"""The memory verdict: ``remembered`` is true, false or "cannot tell", by a stated rule and its intervals.

A rule is a list of clauses ``SCORE>=VALUE`` (default ``cloze>=0.3,extraction_exact>=0.05``). Per clause:

- **holds**: the score's value reaches the threshold — the book is remembered (``true``);
- **ruled out**: the upper end of the score's 95% interval lies below the threshold;
- **not ruled out**: below the threshold, but the interval still reaches it; for a share, how many items
  at the rate seen would bring its Wilson upper bound below the threshold;
- **cannot tell**: the probe ran but could not do the task (a cloze answered with a worked example's name
  or with no name of the book), so its value is no evidence either way;
- **not measured**: the probe did not run or had no items.

``true`` when any clause holds; ``false`` only when every clause that was measured and could tell is ruled
out (and at least one was); otherwise ``"cannot tell"``, with what was missing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from longread.metrics.accuracy import wilson_interval
from longread.probes.errors import ProbeSettingsError

SCORES = ("cloze", "cloze-rank", "extraction_exact", "extraction_common_prefix", "min_k")
RULE = re.compile(r"^\s*(" + "|".join(re.escape(s) for s in SCORES) + r")\s*>=\s*(-?[0-9.]+)\s*$")
DEFAULT_RULE = "cloze>=0.3,extraction_exact>=0.05"
CANNOT_TELL: Literal["cannot tell"] = "cannot tell"
SHARES = frozenset({"cloze", "cloze-rank", "extraction_exact"})
"""Scores that are shares of items (Wilson intervals): their needed item counts can be computed."""
MAX_ITEMS = 10_000_000

Verdict = bool | Literal["cannot tell"]


def parse_rule(rule: str) -> list[tuple[str, float]]:
    clauses = []
    for part in rule.split(","):
        match = RULE.match(part)
        if match is None:
            raise ProbeSettingsError(
                f"--remembered: {part.strip()!r} is not SCORE>=VALUE (scores: {', '.join(SCORES)}); e.g. "
                f"{DEFAULT_RULE}"
            )
        clauses.append((match.group(1), float(match.group(2))))
    return clauses


@dataclass(frozen=True)
class Clause:
    score: str
    threshold: float
    status: str
    """``holds``, ``ruled out``, ``not ruled out``, ``cannot tell`` or ``not measured``."""
    value: float | None = None
    ci_high: float | None = None
    n: int = 0
    needed: int | None = None
    """A share not ruled out: the items that, at the rate seen, would rule it out (None: no count would,
    or not a share)."""

    def text(self) -> str:
        if self.status == "not measured":
            return f"{self.score}: not measured"
        if self.status == CANNOT_TELL:
            return f"{self.score}: cannot tell (the model did not do the task)"
        shown = f"{self.score} {self.value:.3g} (95% upper {self.ci_high:.3g}, n={self.n})"
        if self.status == "holds":
            return f"{shown} reaches {self.threshold:g}"
        if self.status == "ruled out":
            return f"{shown}: below {self.threshold:g}, ruled out"
        more = (
            f"; about {self.needed:,} items at this rate would rule it out"
            if self.needed is not None
            else "; more items would be needed"
        )
        return f"{shown}: below {self.threshold:g} but the interval reaches it{more}"


def judge(scores: Mapping[str, Mapping[str, Any]], rule: str) -> tuple[Verdict, list[Clause]]:
    """The verdict of ``rule`` on one book's ``scores`` and each clause's standing (module docstring)."""
    clauses = [_clause(scores.get(name), name, threshold) for name, threshold in parse_rule(rule)]
    if any(clause.status == "holds" for clause in clauses):
        return True, clauses
    telling = [clause for clause in clauses if clause.status not in ("not measured", CANNOT_TELL)]
    if telling and all(clause.status == "ruled out" for clause in telling):
        return False, clauses
    return CANNOT_TELL, clauses


def _clause(score: Mapping[str, Any] | None, name: str, threshold: float) -> Clause:
    if not score or not score.get("n") or score.get("value") is None:
        return Clause(name, threshold, "not measured")
    value, high, n = float(score["value"]), score.get("ci_high"), int(score["n"])
    if score.get("verdict") == CANNOT_TELL:
        return Clause(name, threshold, CANNOT_TELL, value, high, n)
    if value >= threshold:
        return Clause(name, threshold, "holds", value, high, n)
    if high is not None and high < threshold:
        return Clause(name, threshold, "ruled out", value, high, n)
    needed = items_needed(int(score.get("count", round(value * n))), n, threshold) if name in SHARES else None
    return Clause(name, threshold, "not ruled out", value, high, n, needed)


def items_needed(count: int, n: int, threshold: float) -> int | None:
    """The fewest items m ≥ n whose Wilson 95% upper bound, at the rate ``count / n``, lies below
    ``threshold``; None when the rate itself reaches it (no count would rule it out)."""
    rate = count / n if n else 0.0
    if rate >= threshold or threshold <= 0:
        return None

    def below(m: int) -> bool:
        return wilson_interval(min(m, round(rate * m)), m)[1] < threshold

    high = max(n, 1)
    while not below(high):
        if high > MAX_ITEMS:
            return None
        high *= 2
    low = max(n, 1)
    while low < high:
        middle = (low + high) // 2
        if below(middle):
            high = middle
        else:
            low = middle + 1
    return low


def verdict_text(verdict: bool | str | None) -> str:
    """``yes``, ``no``, ``cannot tell`` or ``—`` (not probed)."""
    if verdict is None:
        return "—"
    if verdict == CANNOT_TELL:
        return CANNOT_TELL
    return "yes" if verdict else "no"


def clauses_as_dicts(clauses: Sequence[Clause]) -> list[dict[str, Any]]:
    return [asdict(clause) for clause in clauses]
