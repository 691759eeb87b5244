"""Paired comparisons: two runs on the same instances, instance by instance.

``longread report RUN_A RUN_B --group-by negatives_from`` compares every later run with the first on
the instances both evaluated. Rows are paired on the instance's **full identity** — its sample key,
which holds the instance id (variant, negatives' origin, boundary …) and its x — whenever the two runs
share any (a controlled run and its intact run; the same data read twice). Runs over different variants
of the same items (in-book and out-of-book negatives of one build) share no identity; they are paired on
the *pair id* (ChapterBreak: the boundary; other tasks: the instance id) at the same x, and a run that
holds two instances of one pair id at one x (within one ``--group-by`` group) is refused, naming both:
pairing them would be a guess. Per x value and pair of groups (``in-book → out-of-book``) the report
gives the metric of both runs on the paired instances, their difference (later − first) with a 95%
interval that speaks for books where rows name five or more books, else for the instances
(:mod:`longread.metrics.paired`: the hull of a CR2 cluster interval and Tango's for right/wrong metrics,
CR2 for continuous ones, the delete-one-book jackknife for corpus-level ones — BLEU, macro F1), the p
that goes with it and, for yes/no metrics, McNemar's exact p per instance; and how many rows of each run
found no partner (``unmatched``), so nothing is left out unsaid. A comparison pooled over every x
(``pool_x``) pairs each **instance** once: its score is its mean over the x values it was asked at, so
an instance asked at four prefix lengths is one pair, not four.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from longread.errors import LongreadError
from longread.evaluation.registry import make_task
from longread.evaluation.results import x_value
from longread.evaluation.rows import read_typed_rows
from longread.evaluation.task import Metric
from longread.files import finite_or_none
from longread.metrics import group_sort_key
from longread.metrics.paired import PairedScores, paired_corpus_scores, paired_scores
from longread.report.grouped import field_value, selected_keys
from longread.report.load import RunReport
from longread.report.table import format_x

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
    level: str = "instances"
    """What the interval speaks for: ``books`` (five or more books) or ``instances``."""
    books: int | None = None
    """Distinct books among the paired instances (None: the rows name none)."""
    paired_on: str = "instance"
    """``instance`` (full identity) or ``pair id`` (runs over different variants of the same items)."""
    p: float | None = None
    """The p that goes with the interval (before a family's adjustment)."""
    method: str = ""
    too_few_books: bool = False
    pooled: bool = False
    """Pooled over every x: one pair per instance, its mean over its x values."""

    def as_dict(self) -> dict[str, Any]:
        return finite_or_none(asdict(self))


@dataclass(frozen=True)
class _Scored:
    identity: str
    """The row's sample key: the instance's full identity at its x."""
    boundary: tuple[Any, ...]
    """(pair id, x): what a row of another variant of the same item shares with it."""
    x: Any
    group: str
    cluster: str | None
    instance: str
    """The instance without its x (what a comparison pooled over x pairs once)."""
    """The book the instance comes from (None: the row names none)."""
    reading: str | None
    """How a read-along task read the book: ``sliding`` (one reading, a read-along cache) or ``cut-left``
    (each question's window read again); None for other tasks."""
    value: Any
    """The row's value of a sample-level metric; the typed row itself for a corpus-level one."""


class MixedReading(LongreadError):
    """Two runs read the same book by different methods (read-along cache vs cut-left windows)."""


class PairingError(LongreadError):
    """Two rows of one run claim the same partner: pairing them would be a guess."""


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
    _refuse_mixed_reading(first, rows_first, later, rows_later)
    shared = {row.identity for row in rows_first} & {row.identity for row in rows_later}
    paired_on = "instance" if shared else "pair id"
    key_of = _identity_key
    if not shared:
        _refuse_collisions(first, rows_first)
        _refuse_collisions(later, rows_later)
        with_group = _ambiguous(rows_first) or _ambiguous(rows_later)
        key_of = _boundary_and_group_key if with_group else _boundary_key
    by_key = {key_of(row): row for row in rows_later}
    partners = {key_of(row) for row in rows_first}
    buckets: dict[tuple[Any, str], list[tuple[_Scored, _Scored]]] = {}
    for row in rows_first:
        match = by_key.get(key_of(row))
        if match is not None:
            label = row.group if row.group == match.group else f"{row.group} → {match.group}"
            buckets.setdefault((row.x, label), []).append((row, match))
    out = []
    for (x, label), pairs in sorted(
        buckets.items(), key=lambda item: (group_sort_key(item[0][0]), item[0][1])
    ):
        scores = _scores(metric, pairs if x != ALL_X or metric.level == "corpus" else _per_instance(pairs))
        unmatched_first = sum(1 for r in rows_first if r.x == x and key_of(r) not in by_key)
        unmatched_later = sum(1 for r in rows_later if r.x == x and key_of(r) not in partners)
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
                level=scores.level,
                books=scores.clusters,
                paired_on=paired_on,
                p=scores.p,
                method=scores.method,
                too_few_books=scores.too_few_books,
                pooled=x == ALL_X,
            )
        )
    return out


def _scores(metric: Metric, pairs: Sequence[tuple[_Scored, _Scored]]) -> PairedScores:
    values_first, values_later = [a.value for a, _ in pairs], [b.value for _, b in pairs]
    named = [a.cluster for a, _ in pairs]
    clusters = None if any(name is None for name in named) else [str(name) for name in named]
    if metric.level == "corpus":
        assert metric.corpus_value is not None
        return paired_corpus_scores(values_first, values_later, metric.corpus_value, clusters=clusters)
    return paired_scores(values_first, values_later, clusters=clusters)


def _per_instance(pairs: Sequence[tuple[_Scored, _Scored]]) -> list[tuple[_Scored, _Scored]]:
    """One pair per instance: its values averaged over the x values it was paired at (a right/wrong
    metric becomes the share of its x values it got right)."""
    grouped: dict[str, list[tuple[_Scored, _Scored]]] = {}
    for pair in pairs:
        grouped.setdefault(pair[0].instance, []).append(pair)
    out = []
    for members in grouped.values():
        if len(members) == 1:
            out.append(members[0])
            continue
        first = replace(members[0][0], value=sum(float(a.value) for a, _ in members) / len(members))
        later = replace(members[0][1], value=sum(float(b.value) for _, b in members) / len(members))
        out.append((first, later))
    return out


def _refuse_mixed_reading(
    first: RunReport, rows_first: Sequence[_Scored], later: RunReport, rows_later: Sequence[_Scored]
) -> None:
    """A read-along run (sliding cache) and a cut-left run differ by their reading, not only by what
    they compare: pairing them would mix the two."""
    methods_first = {row.reading for row in rows_first if row.reading}
    methods_later = {row.reading for row in rows_later if row.reading}
    if methods_first and methods_later and methods_first != methods_later:
        raise MixedReading(
            f"{first.label} ({first.path}) was read by {', '.join(sorted(methods_first))} and {later.label} "
            f"({later.path}) by {', '.join(sorted(methods_later))}: their difference would mix the reading "
            "methods; compare runs read the same way (`longread ablate` reads its intact run cut-left, as "
            "its controls)"
        )


def _identity_key(row: _Scored) -> tuple[Any, ...]:
    return (row.identity,)


def _boundary_key(row: _Scored) -> tuple[Any, ...]:
    return row.boundary


def _boundary_and_group_key(row: _Scored) -> tuple[Any, ...]:
    return (*row.boundary, row.group)


def _ambiguous(rows: Sequence[_Scored]) -> bool:
    """Does one pair id occur twice at one x (variants of an item told apart by --group-by)?"""
    return len({row.boundary for row in rows}) < len(rows)


def _refuse_collisions(run: RunReport, rows: Sequence[_Scored]) -> None:
    """Pairing on pair ids needs one instance per pair id, x and group in each run."""
    seen: dict[tuple[Any, ...], str] = {}
    for row in rows:
        key = _boundary_and_group_key(row)
        other = seen.setdefault(key, row.identity)
        if other != row.identity:
            raise PairingError(
                f"{run.label} ({run.path}) holds two instances of pair id {row.boundary[0]!r} at "
                f"{row.boundary[1]}: {other!r} and {row.identity!r}, and the other run shares neither; "
                "compare runs of the same data, or split them with --group-by (e.g. negatives_from)"
            )


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
        "Paired on the instances both runs evaluated (the same instance, or for runs over other variants of "
        "the same items the same pair id, at the same x); difference = later − first with its 95% interval: "
        "by book where rows name five or more books (right/wrong: the hull of CR2 with t and Tango's score "
        "interval; continuous: CR2; corpus metrics: the delete-one-book jackknife), else by instance; "
        "McNemar: exact, two-sided, per instance (docs: statistics)."
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
        book = getattr(row, "book_id", None)
        policy = getattr(row, "policy", None)
        reading = str(policy).split("(", 1)[0] if policy else None
        instance = getattr(row, "id", None) or str(row.key).rsplit("@", 1)[0]
        scored.append(
            _Scored(str(row.key), (_pair_id(row), x), ALL_X if pool_x else x, group,
                    None if book is None else str(book), str(instance), reading, value)
        )  # fmt: skip
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
