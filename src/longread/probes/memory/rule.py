"""The memory verdict: ``remembered`` is true, false or "cannot tell", by a stated rule and its intervals.

A rule is a list of clauses ``SCORE>=VALUE`` (default ``cloze>=0.3,extraction_exact>=0.05``). Per clause:

- **holds**: the *lower* end of the score's 95% interval reaches the threshold — the book is remembered
  (``true``); for ``cloze-rank`` the model must also beat the most-frequent-name prior on the same
  passages (paired, McNemar's exact p below 0.05 after Holm's adjustment over the run's books, and a
  positive lead), since always naming the book's most frequent candidate scores that share too;
- **ruled out**: the *upper* end of the interval lies below the threshold — the two ends are treated
  alike, so neither verdict leans on a point estimate;
- **not ruled out**: the interval holds the threshold; for a share, how many items at the rate seen would
  settle it (bring its Wilson upper bound below the threshold, or its lower bound to it);
- **cannot tell**: the probe ran but could not do the task (a cloze answered mostly with a worked
  example's name or with no name of the book), so its value is no evidence either way — checked after
  *holds*, so it never hides a clause that holds;
- **not measured**: the probe did not run or had no items.

``true`` when any clause holds; ``false`` only when every clause that was measured and could tell is ruled
out (and at least one was); otherwise ``"cannot tell"``, with what was missing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from longread.metrics.accuracy import wilson_interval
from longread.metrics.claims import holm
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
    """A share not ruled out: the items that, at the rate seen, would settle it (None: no count would, or
    not a share)."""
    ci_low: float | None = None
    why: str = ""
    """What else kept it from holding (cloze-rank: the prior it does not beat)."""

    def text(self) -> str:
        if self.status == "not measured":
            return f"{self.score}: not measured"
        if self.status == CANNOT_TELL:
            return f"{self.score}: cannot tell (the model did not do the task)"
        low = "—" if self.ci_low is None else f"{self.ci_low:.3g}"
        shown = f"{self.score} {self.value:.3g} (95% [{low}, {self.ci_high:.3g}], n={self.n})"
        if self.status == "holds":
            return f"{shown}: its interval reaches {self.threshold:g}"
        if self.status == "ruled out":
            return f"{shown}: below {self.threshold:g}, ruled out"
        if self.why:
            return f"{shown}: {self.why}"
        settle = "rule it out" if self.value is not None and self.value < self.threshold else "establish it"
        more = (
            f"; about {self.needed:,} items at this rate would {settle}"
            if self.needed is not None
            else "; more items would be needed"
        )
        return f"{shown}: the interval holds {self.threshold:g}{more}"


def judge(scores: Mapping[str, Mapping[str, Any]], rule: str) -> tuple[Verdict, list[Clause]]:
    """The verdict of ``rule`` on one book's ``scores`` and each clause's standing (module docstring)."""
    clauses = [_clause(scores.get(name), name, threshold) for name, threshold in parse_rule(rule)]
    if any(clause.status == "holds" for clause in clauses):
        return True, clauses
    telling = [clause for clause in clauses if clause.status not in ("not measured", CANNOT_TELL)]
    if telling and all(clause.status == "ruled out" for clause in telling):
        return False, clauses
    return CANNOT_TELL, clauses


PRIOR_ALPHA = 0.05
"""cloze-rank holds only when the model beats the most-frequent-name prior with an adjusted p below this."""


def _clause(score: Mapping[str, Any] | None, name: str, threshold: float) -> Clause:
    if not score or not score.get("n") or score.get("value") is None:
        return Clause(name, threshold, "not measured")
    value, low, high, n = float(score["value"]), score.get("ci_low"), score.get("ci_high"), int(score["n"])
    prior = _prior_beaten(score) if name == "cloze-rank" else ""
    if low is not None and low >= threshold and not prior:
        return Clause(name, threshold, "holds", value, high, n, ci_low=low)
    if score.get("verdict") == CANNOT_TELL:
        return Clause(name, threshold, CANNOT_TELL, value, high, n, ci_low=low)
    if high is not None and high < threshold:
        return Clause(name, threshold, "ruled out", value, high, n, ci_low=low)
    count = int(score.get("count", round(value * n)))
    needed = items_needed(count, n, threshold) if name in SHARES else None
    why = prior if low is not None and low >= threshold else ""
    return Clause(name, threshold, "not ruled out", value, high, n, needed, ci_low=low, why=why)


def _prior_beaten(score: Mapping[str, Any]) -> str:
    """Empty when the ranked cloze beats the most-frequent-name prior; else why it does not."""
    p = score.get("most_frequent_p_adjusted", score.get("most_frequent_p"))
    lead = score.get("over_most_frequent")
    if p is None or lead is None:
        return "no comparison with the most-frequent-name prior, so it cannot hold"
    if lead > 0 and p < PRIOR_ALPHA:
        return ""
    return (
        f"its interval reaches the threshold, but always naming the book's most frequent candidate scores "
        f"{float(score.get('most_frequent', math.nan)):.3g} on the same passages and the model does not beat "
        f"it (lead {lead:+.3g}, Holm-adjusted p = {p:.3g}), so it does not hold"
    )


def items_needed(count: int, n: int, threshold: float) -> int | None:
    """The fewest items m ≥ n that, at the rate ``count / n``, settle the clause: a Wilson 95% upper bound
    below ``threshold`` (rate below it) or a lower bound reaching it (rate above it); None at the
    threshold itself (no count would) or past :data:`MAX_ITEMS`."""
    rate = count / n if n else 0.0
    if rate == threshold or threshold <= 0:
        return None

    def below(m: int) -> bool:
        low, high = wilson_interval(min(m, round(rate * m)), m)
        return high < threshold if rate < threshold else low >= threshold

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


def adjust_prior_tests(scores: Sequence[Mapping[str, Any]]) -> list[float | None]:
    """The ranked cloze's prior comparisons over the run's books as one family: their McNemar p adjusted
    by Holm (None where a book has none)."""
    return holm([s.get("most_frequent_p") if s else None for s in scores])


def verdict_text(verdict: bool | str | None) -> str:
    """``yes``, ``no``, ``cannot tell`` or ``—`` (not probed)."""
    if verdict is None:
        return "—"
    if verdict == CANNOT_TELL:
        return CANNOT_TELL
    return "yes" if verdict else "no"


def clauses_as_dicts(clauses: Sequence[Clause]) -> list[dict[str, Any]]:
    return [asdict(clause) for clause in clauses]
