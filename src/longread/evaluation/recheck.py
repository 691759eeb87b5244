"""On resume, re-score a few finished samples and say whether they still come out the same.

Threads, batch sizes, the prefill chunk and Ray replicas are runtime (recorded per session, not part of
a run's identity), so a run may be resumed under others. They change a log-prob only in its last digits;
:func:`recheck_rows` holds that to :mod:`longread.models.tolerance`: each re-scored row is compared with
the stored one field by field, a number to the summed-log-prob tolerance of the most tokens any one value
of the result sums (a candidate, an option), everything else (predictions, texts, counts) exactly — except
that a choice (prediction, tie, correct) flipped between two options whose scores lie within the tolerance
of each other, every number of the row agreeing, is a near tie, reported apart. A
field that only marks how a row was obtained (``reused_shorter_length``) is left out: it is the one
that differs between the row built as asked and as reused.

What it found is returned, stored in the run (``config.json``'s ``sessions``) and printed; it never
changes ``samples.jsonl`` or ``results.json``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from longread.evaluation.dispatch import ask, scored_tokens
from longread.evaluation.task import Sample, Task
from longread.models.tolerance import summed_logprob_tolerance, tolerance_rule

logger = logging.getLogger(__name__)

DEFAULT_RECHECK = 2
"""Finished samples the command line re-scores on ``--resume`` (``--recheck N``; 0: none)."""


@dataclass(frozen=True)
class RowDifference:
    key: str
    field: str
    """Dotted path in the row, e.g. ``logprobs[2]``."""
    stored: Any
    now: Any
    tolerance: float | None
    """The bound a number was held to; None: compared exactly."""

    def __str__(self) -> str:
        if self.tolerance is not None and _is_number(self.stored) and _is_number(self.now):
            delta = abs(float(self.now) - float(self.stored))
            return (
                f"{self.key}: {self.field} {self.stored!r} → {self.now!r} "
                f"(|Δ| {delta:.3g} > {self.tolerance:.3g})"
            )
        return f"{self.key}: {self.field} {self.stored!r} → {self.now!r}"


@dataclass
class RecheckReport:
    """What re-scoring finished samples found."""

    keys: list[str] = field(default_factory=list)
    """Samples re-scored and compared."""
    differences: list[RowDifference] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    """Samples whose re-scoring raised (key, message): not compared."""
    near_ties: list[RowDifference] = field(default_factory=list)
    """A choice that flipped between two options whose scores agree within the tolerance (a near tie), every
    number of the row within it too: the same numbers, read in another order of floating-point sums."""
    rule: str = field(default_factory=tolerance_rule)

    @property
    def differing_keys(self) -> list[str]:
        return sorted({difference.key for difference in self.differences})

    def lines(self) -> list[str]:
        """What to print: one summary line, then each difference."""
        if not self.keys and not self.failed:
            return []
        head = (
            f"recheck: re-scored {len(self.keys)} finished sample(s) under this session's runtime; "
            f"{len(self.differing_keys)} differ past the tolerance ({self.rule})"
        )
        lines = [head, *(f"  {difference}" for difference in self.differences)]
        lines += [f"  {key}: could not be re-scored ({message})" for key, message in self.failed]
        lines += [
            f"  {d} (a near tie: the options' scores agree within the tolerance)" for d in self.near_ties
        ]
        return lines

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "keys": list(self.keys),
            "differing_keys": self.differing_keys,
            "differences": [
                {
                    "key": d.key,
                    "field": d.field,
                    "stored": d.stored,
                    "now": d.now,
                    "tolerance": d.tolerance,
                }
                for d in self.differences
            ],
            "failed": [{"key": key, "message": message} for key, message in self.failed],
            "near_ties": [
                {"key": d.key, "field": d.field, "stored": d.stored, "now": d.now} for d in self.near_ties
            ],
        }


def recheck_rows(
    task: Task[Any, Any],
    kind: str,
    backend: Any,
    samples: Sequence[Sample[Any]],
    stored: Mapping[str, Mapping[str, Any]],
) -> RecheckReport:
    """Ask ``samples`` again, one by one, and compare each new row with its ``stored`` row."""
    report = RecheckReport()
    for sample in samples:
        try:
            result = ask(backend, kind, [task.request(sample, kind)], None)[0]
            fresh = _dump(task.row(sample, result, kind, reused=False))
            marker = _dump(task.row(sample, result, kind, reused=True))
        except Exception as exc:  # a recheck must not end a run that finished its work
            report.failed.append((sample.key, f"{type(exc).__name__}: {exc}"))
            continue
        how_obtained = {name for name in fresh if fresh.get(name) != marker.get(name)}
        tolerance = summed_logprob_tolerance(scored_tokens(result))
        old = stored[sample.key]
        found: list[RowDifference] = []
        for name in sorted((fresh.keys() | old.keys()) - how_obtained):
            _compare(sample.key, name, old.get(name), fresh.get(name), tolerance, found)
        if found and _near_tie_flip(found, fresh, tolerance):
            report.near_ties += found
        else:
            report.differences += found
        report.keys.append(sample.key)
    for line in report.lines()[1:] if report.differences or report.failed or report.near_ties else []:
        logger.warning("%s", line.strip())
    return report


DECIDED = frozenset({"prediction", "tie", "correct"})
"""Fields a row decides from its scores: they may flip where two scores are a near tie."""


def _near_tie_flip(found: Sequence[RowDifference], fresh: Mapping[str, Any], tolerance: float) -> bool:
    """Only decided fields differ, every number agrees, and two of the row's scores lie within the
    tolerance of each other."""
    if any(d.tolerance is not None or d.field not in DECIDED for d in found):
        return False
    for values in fresh.values():
        if isinstance(values, list) and len(values) >= 2 and all(_is_number(v) for v in values):
            top = sorted((float(v) for v in values), reverse=True)[:2]
            if top[0] - top[1] <= 2 * tolerance:
                return True
    return False


def _dump(row: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = row.model_dump(mode="json", exclude_none=False)
    return dumped


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _compare(key: str, path: str, old: Any, new: Any, tolerance: float, out: list[RowDifference]) -> None:
    if _is_number(old) and _is_number(new) and (isinstance(old, float) or isinstance(new, float)):
        same = (math.isnan(old) and math.isnan(new)) or abs(float(new) - float(old)) <= tolerance
        if not same:
            out.append(RowDifference(key, path, old, new, tolerance))
        return
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for name in sorted(old.keys() | new.keys()):
            _compare(key, f"{path}.{name}", old.get(name), new.get(name), tolerance, out)
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (before, after) in enumerate(zip(old, new, strict=True)):
            _compare(key, f"{path}[{index}]", before, after, tolerance, out)
        return
    if old != new:
        out.append(RowDifference(key, path, old, new, None))
