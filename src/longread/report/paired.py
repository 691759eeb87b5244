"""Paired comparisons: two runs on the same instances, instance by instance.

``longread report RUN_A RUN_B --group-by negatives_from`` compares every later run with the first on
the instances both evaluated: a row of one run is paired with the row of the other that has the same
*pair id* (ChapterBreak: the boundary, equal for its in-book and out-of-book variants; other tasks: the
instance id) at the same x value. Within a run a pair id is normally unique per x; where one run holds
several variants of an item (a data file with both), the ``--group-by`` values join the key, so only
rows of the same group are paired. Per x value and pair of groups (``in-book → out-of-book``) the
report gives the primary metric of both runs on the paired instances, their difference (later − first)
with a seeded paired-bootstrap 95% interval (a corpus-level metric — BLEU, macro F1 — computed again on
each resample of instances) and, for yes/no metrics, McNemar's exact p-value — and how
many rows of each run found no partner (``unmatched``), so nothing is left out unsaid.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from longread.errors import LongreadError
from longread.evaluation.registry import make_task
from longread.evaluation.results import x_value
from longread.evaluation.rows import read_typed_rows
from longread.evaluation.task import Metric
from longread.metrics import group_sort_key
from longread.metrics.paired import PAIRED_RESAMPLES, paired_corpus_scores, paired_scores
from longread.report.grouped import field_value, selected_keys
from longread.report.load import RunReport
from longread.report.table import format_x

PAIRED_SEED = 0
ALL_X = "all"
"""The x value of a comparison pooled over every x."""


@dataclass(frozen=True)
class PairedDifference:
    """The first run against a later one, at one x value, on the instances both evaluated."""

    first: str
    later: str
    x: Any
    groups: str
    """``group of the first run → group of the later`` (one name when equal; ``all`` without --group-by)."""
    metric: str
    paired: int
    unmatched_first: int
    """Rows of the first run at this x with no partner in the later run."""
    unmatched_later: int
    value_first: float
    value_later: float
    difference: float
    ci_low: float
    ci_high: float
    only_first: int | None
    """Yes/no metrics: paired instances only the first run got right."""
    only_later: int | None
    mcnemar_p: float | None

    def as_dict(self) -> dict[str, Any]:
        values = asdict(self)
        return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in values.items()}


@dataclass(frozen=True)
class _Scored:
    key: tuple[Any, ...]
    x: Any
    group: str
    value: Any
    """The row's value of a sample-level metric; the typed row itself for a corpus-level one."""


def paired_differences(
    runs: Sequence[RunReport], fields: Sequence[str], *, metric: str | None = None, pool_x: bool = False
) -> list[PairedDifference]:
    """Every later run against the first, per x value and pair of groups (see the module docstring).

    ``metric``: another of the task's metrics than the primary one; ``pool_x``: every x value as one
    (``x = "all"``), an instance paired at each x it was asked at.
    """
    if len(runs) < 2:
        return []
    first = runs[0]
    chosen, scored_first = _scored_rows(first, fields, metric, pool_x)
    out: list[PairedDifference] = []
    for later in runs[1:]:
        if later.task == first.task:  # different tasks share no instances
            later_rows = _scored_rows(later, fields, metric, pool_x)[1]
            out += _compare(first, scored_first, later, later_rows, chosen)
    return out


def _compare(
    first: RunReport, rows_first: list[_Scored], later: RunReport, rows_later: list[_Scored], metric: Metric
) -> list[PairedDifference]:
    with_group = _ambiguous(rows_first) or _ambiguous(rows_later)
    by_key = {_pair_key(row, with_group): row for row in rows_later}
    partners = {_pair_key(row, with_group) for row in rows_first}
    buckets: dict[tuple[Any, str], list[tuple[_Scored, _Scored]]] = {}
    for row in rows_first:
        match = by_key.get(_pair_key(row, with_group))
        if match is not None:
            label = row.group if row.group == match.group else f"{row.group} → {match.group}"
            buckets.setdefault((row.x, label), []).append((row, match))
    out = []
    for (x, label), pairs in sorted(
        buckets.items(), key=lambda item: (group_sort_key(item[0][0]), item[0][1])
    ):
        values_first, values_later = [a.value for a, _ in pairs], [b.value for _, b in pairs]
        if metric.level == "corpus":
            assert metric.corpus_value is not None
            scores = paired_corpus_scores(values_first, values_later, metric.corpus_value, seed=PAIRED_SEED)
        else:
            scores = paired_scores(values_first, values_later, seed=PAIRED_SEED)
        unmatched_first = sum(1 for r in rows_first if r.x == x and _pair_key(r, with_group) not in by_key)
        unmatched_later = sum(1 for r in rows_later if r.x == x and _pair_key(r, with_group) not in partners)
        out.append(
            PairedDifference(
                first=first.label,
                later=later.label,
                x=x,
                groups=label,
                metric=metric.name,
                paired=scores.n,
                unmatched_first=unmatched_first,
                unmatched_later=unmatched_later,
                value_first=scores.mean_a,
                value_later=scores.mean_b,
                difference=scores.difference,
                ci_low=scores.ci_low,
                ci_high=scores.ci_high,
                only_first=scores.only_a,
                only_later=scores.only_b,
                mcnemar_p=scores.mcnemar_p,
            )
        )
    return out


def paired_table(differences: Sequence[PairedDifference], scale: str = "linear") -> str:
    """A markdown table of paired differences (values in % for yes/no metrics)."""
    if not differences:
        return ""
    header = "| first → later | groups | x | paired | unmatched (first / later) | first | later | " \
        "difference [95% CI] | only first / only later right | McNemar p |"  # fmt: skip
    lines = [header, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for d in differences:
        percent = d.mcnemar_p is not None
        unit = 100.0 if percent else 1.0
        digits = ".1f" if percent else ".4g"
        interval = (
            f"{unit * d.difference:+{digits}} [{unit * d.ci_low:+{digits}}, {unit * d.ci_high:+{digits}}]"
        )
        discordant = f"{d.only_first} / {d.only_later}" if percent else "—"
        p_value = f"{d.mcnemar_p:.4g}" if d.mcnemar_p is not None else "—"
        cells = [
            f"{d.first} → {d.later}",
            d.groups,
            format_x(d.x, scale),
            str(d.paired),
            f"{d.unmatched_first} / {d.unmatched_later}",
            f"{unit * d.value_first:{digits}}",
            f"{unit * d.value_later:{digits}}",
            interval,
            discordant,
            p_value,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    note = (
        f"Paired on the instances both runs evaluated (same pair id and x); difference = later − first, "
        f"95% paired bootstrap ({PAIRED_RESAMPLES} resamples, seed {PAIRED_SEED}); McNemar: exact, two-sided."
    )
    return "\n".join(lines) + "\n\n" + note


def _scored_rows(
    run: RunReport, fields: Sequence[str], name: str | None = None, pool_x: bool = False
) -> tuple[Metric, list[_Scored]]:
    """The metric (the run's primary one unless named), and per row its value (a sample-level metric) or
    the row itself (a corpus-level one)."""
    task = make_task(run.task)
    metric = _chosen_metric(run, task.metrics(), name or run.primary_metric)
    rows = read_typed_rows(Path(run.path), task.row_model)
    selected = selected_keys(Path(run.path))
    scored = []
    for row in rows:
        if selected is not None and row.key not in selected:
            continue
        value = row if metric.sample_value is None else metric.sample_value(row)
        if value is None:
            continue
        group = " / ".join(field_value(run.path, row, name) for name in fields) if fields else "all"
        x = x_value(row, task.x_axis.field)
        scored.append(_Scored((_pair_id(row), x), ALL_X if pool_x else x, group, value))
    return metric, scored


class NotPairable(LongreadError):
    """The runs cannot be compared instance by instance (the report says why instead)."""


def _chosen_metric(run: RunReport, metrics: Sequence[Metric], name: str) -> Metric:
    metric = next((m for m in metrics if m.name == name), None)
    if metric is None:
        raise NotPairable(
            f"no paired comparison: {name!r} is not a metric of {run.task} ({run.label}); it has "
            + ", ".join(m.name for m in metrics)
        )
    return metric


def _pair_id(row: Any) -> str:
    for name in ("pair_id", "id"):
        value = getattr(row, name, None)
        if value is None and row.model_extra:
            value = row.model_extra.get(name)
        if value is not None:
            return str(value)
    return str(row.key)


def _pair_key(row: _Scored, with_group: bool) -> tuple[Any, ...]:
    return (*row.key, row.group) if with_group else row.key


def _ambiguous(rows: Sequence[_Scored]) -> bool:
    """Does one pair id occur twice at one x (several variants of an item in one run)?"""
    return len({row.key for row in rows}) < len(rows)
