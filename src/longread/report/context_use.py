"""The context-use report: did the model use the distant context?

Each controlled run (``shuffle`` / ``replace`` / ``none`` beyond the last K tokens) is paired with the
intact run instance by instance (:mod:`longread.report.paired`): per x value (prefix length, reading
position, document length) the intact score, the controlled score, their paired difference with its 95%
interval (by book where rows name five or more books), its p and the p adjusted by Holm over every row
of the page — and one sentence a reader can quote, no larger than the claim rule of
:mod:`longread.metrics.claims` allows. A controlled run that cannot be paired is listed with its reason.
The plot draws the score against the tokens kept intact, one line per control, with the intact score and
chance. Written as ``context_use.md``, ``context_use.json`` and ``context_use.png``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from longread.errors import LongreadError
from longread.evaluation.registry import make_task
from longread.files import atomic_save_png, atomic_write_text, finite_or_none
from longread.metrics.claim_words import USES, sentence
from longread.metrics.claims import CLAIM_RULE, MIN_PAIRED
from longread.report.claimed import (
    DIFFERENCE_ALIGN,
    DIFFERENCE_HEADER,
    adjusted_p,
    difference_cells,
    evidence,
    family_words,
    level_words,
)
from longread.report.load import RunReport, load_runs
from longread.report.paired import ALL_X, NotPairable, PairedDifference, paired_differences

REPORT_MD = "context_use.md"
REPORT_JSON = "context_use.json"
REPORT_PNG = "context_use.png"
VERBS = {"shuffle": "shuffling", "replace": "replacing", "none": "dropping"}
COLOURS = {"shuffle": "tab:orange", "replace": "tab:red", "none": "tab:purple"}


@dataclass(frozen=True)
class ContextUseRow:
    x: Any
    control: str
    keep_last: int
    metric: str
    paired: int
    intact: float
    controlled: float
    difference: float
    ci_low: float
    ci_high: float
    p: float | None
    sentence: str
    claim: str = "too few"
    """effect, not established, null, too few or too few books (:mod:`longread.metrics.claims`)."""
    bound: float | None = None
    """A null: the largest difference its interval allows."""
    level: str = "instances"
    """What the interval speaks for: books (five or more) or instances."""
    books: int | None = None
    p_adjusted: float | None = None
    """Holm-adjusted over the page's family (what the claim uses)."""
    mcnemar_p: float | None = None
    only_intact: int | None = None
    only_controlled: int | None = None
    method: str = ""
    pooled: bool = False


@dataclass(frozen=True)
class Unpaired:
    """A controlled run that could not be compared with the intact one, and why (said in the report)."""

    run: str
    metric: str
    reason: str


def _control_of(run: RunReport) -> tuple[str, int]:
    config = json.loads((run.path / "config.json").read_text(encoding="utf-8")).get("config", {})
    settings = config.get("settings", {})
    return str(settings.get("context_control", "intact")), int(settings.get("keep_last", 0))


def control_words(control: str, keep_last: int) -> str:
    """``replacing everything before the last 256 tokens``."""
    part = "the whole context" if keep_last == 0 else f"everything before the last {keep_last:,} tokens"
    return f"{VERBS.get(control, control)} {part}"


def context_use(
    intact: Path, controlled: Sequence[Path], metrics: Sequence[str] = ()
) -> tuple[list[ContextUseRow], list[RunReport], list[Unpaired]]:
    """The paired rows of every controlled run against the intact one, the loaded runs, and the runs (per
    metric) that could not be paired — each with its reason, never dropped in silence.

    ``metrics``: the task's metrics to compare (default: the primary one). With more than one x value,
    each control also gets a row pooled over every x (``x = "all"``).
    """
    runs = load_runs([intact, *controlled])
    first = runs[0]
    task = make_task(first.task)
    known = {m.name: m for m in task.metrics()}
    names = list(metrics) or [first.primary_metric]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise LongreadError(
            f"{first.task} has no metric {', '.join(map(repr, unknown))}; its metrics: {', '.join(known)}"
        )
    found: list[tuple[PairedDifference, str, int, bool]] = []
    unpaired: list[Unpaired] = []
    for later in runs[1:]:
        control, keep = _control_of(later)
        for name in names:
            try:
                differences = paired_differences([first, later], (), metric=name)
                if len({d.x for d in differences}) > 1:
                    differences += paired_differences([first, later], (), metric=name, pool_x=True)
            except NotPairable as exc:
                unpaired.append(Unpaired(str(later.path), name, str(exc)))
                continue
            if not differences:
                reason = "it shares no instance with the intact run (another data file or sample?)"
                unpaired.append(Unpaired(str(later.path), name, reason))
            found += [(d, control, keep, known[name].higher_is_better) for d in differences]
    rows = _with_family(found)
    order = {name: index for index, name in enumerate(names)}
    rows.sort(key=lambda row: (order[row.metric], row.x == ALL_X, str(row.x), row.control, row.keep_last))
    return rows, runs, unpaired


def _with_family(found: list[tuple[PairedDifference, str, int, bool]]) -> list[ContextUseRow]:
    """The rows, their p adjusted by Holm over all of them (the page's family)."""
    adjusted = adjusted_p([d for d, _, _, _ in found])
    return [
        _row(d, control, keep, higher, p)
        for (d, control, keep, higher), p in zip(found, adjusted, strict=True)
    ]


def _row(
    d: PairedDifference, control: str, keep: int, higher_is_better: bool, p_adjusted: float | None
) -> ContextUseRow:
    said = evidence(d, p_adjusted)
    words = sentence(control_words(control, keep), d.metric, said, higher_is_better, USES)
    claimed = said.claim()
    return ContextUseRow(
        x=d.x, control=control, keep_last=keep, metric=d.metric, paired=d.paired, intact=d.value_first,
        controlled=d.value_later, difference=d.difference, ci_low=d.ci_low, ci_high=d.ci_high, p=d.p,
        sentence=words, claim=claimed.kind, bound=claimed.bound, level=d.level, books=d.books,
        p_adjusted=p_adjusted, mcnemar_p=d.mcnemar_p, only_intact=d.only_first, only_controlled=d.only_later,
        method=d.method, pooled=d.pooled,
    )  # fmt: skip


def write_context_use(
    intact: Path, controlled: Sequence[Path], out: Path, metrics: Sequence[str] = ()
) -> list[Path]:
    """``context_use.md``, ``.json`` and ``.png`` in ``out``; returns their paths."""
    rows, runs, unpaired = context_use(intact, controlled, metrics)
    out.mkdir(parents=True, exist_ok=True)
    chance = runs[0].chance
    lines = [
        f"# Does the model use what it read? — {runs[0].label} on {runs[0].task}",
        "",
        "Each control perturbs the document beyond its last K tokens and is paired with the intact run "
        "instance by instance: difference = controlled − intact, with a 95% interval that "
        f"{level_words([r.level for r in rows], any(r.books for r in rows))}; p goes with the interval "
        "(right/wrong metrics: the larger of McNemar's exact p and the clustered t test's); "
        f"{family_words([r.p_adjusted for r in rows])}. A row pooled over every "
        "x pairs each instance once (its mean over its x values). "
        f"Rule: {CLAIM_RULE}.",
        "",
        f"| metric | {runs[0].x_axis.label} | control | K kept | "
        + DIFFERENCE_HEADER.format(a="intact", b="controlled")
        + " |",
        "| --- | ---: | --- | ---: | " + DIFFERENCE_ALIGN + " |",
    ]
    for row in rows:
        cells = difference_cells(row.paired, row.intact, row.controlled, row.difference, row.ci_low,
                                 row.ci_high, row.p, row.p_adjusted)  # fmt: skip
        lines.append(f"| {row.metric} | {row.x} | {row.control} | {row.keep_last:,} | {cells} |")
    lines += ["", *(f"- {_where(row, runs[0].x_axis.label)}: {row.sentence}." for row in rows), ""]
    if unpaired:
        lines += [f"Not paired ({len(unpaired)}):", ""]
        lines += [f"- {item.run} ({item.metric}): {item.reason}" for item in unpaired]
        lines.append("")
    if chance is not None:
        lines.append(f"Chance ({runs[0].primary_metric}): {chance:.3f}.")
    lines.append(f"\n![score against tokens kept intact]({REPORT_PNG})\n")
    md = out / REPORT_MD
    atomic_write_text(md, "\n".join(lines))
    payload = {
        "intact": str(intact),
        "controlled": [str(path) for path in controlled],
        "chance": chance,
        "rows": [finite_or_none(asdict(row)) for row in rows],
        "unpaired": [asdict(item) for item in unpaired],
        "rule": CLAIM_RULE,
    }
    js = out / REPORT_JSON
    atomic_write_text(js, json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")
    png = plot_context_use(rows, {runs[0].primary_metric: chance}, runs[0].x_axis.label, out / REPORT_PNG)
    return [md, js, png]


def _where(row: ContextUseRow, x_label: str) -> str:
    place = f"over every {x_label}" if row.x == ALL_X else f"at {x_label} {row.x}"
    return f"{row.metric[0].upper()}{row.metric[1:]}, {place}"


def plot_context_use(
    rows: Sequence[ContextUseRow], chance: dict[str, float | None], x_label: str, path: Path
) -> Path:
    """Score against tokens kept intact: one panel per metric × x value (and the pooled "all" last; an x
    value with fewer than :data:`MIN_PAIRED` paired instances gets none), one line per control; the intact
    score (solid grey) and chance (dotted) drawn across."""
    metrics = list(dict.fromkeys(row.metric for row in rows)) or ["score"]
    # x values with too few paired instances to say anything get no panel (the table still lists them)
    shown = [row for row in rows if row.paired >= MIN_PAIRED] or list(rows)
    per_x = sorted({str(row.x) for row in shown if row.x != ALL_X}, key=_x_order)
    per_x += [ALL_X] if any(row.x == ALL_X for row in rows) or not per_x else []
    figure = Figure(figsize=(5.0 * len(per_x), 4.0 * len(metrics)), dpi=130, layout="constrained")
    for m_index, metric in enumerate(metrics):
        for x_index, x in enumerate(per_x):
            axes = figure.add_subplot(len(metrics), len(per_x), m_index * len(per_x) + x_index + 1)
            here = [row for row in rows if str(row.x) == x and row.metric == metric]
            _panel(axes, here, chance.get(metric))
            axes.set_ylabel(metric)
            axes.set_title(f"every {x_label} (pooled)" if x == ALL_X else f"{x_label} {x}")
    return atomic_save_png(figure, path)


def _x_order(x: str) -> tuple[int, float, str]:
    try:
        return (0, float(x), x)
    except ValueError:
        return (1, 0.0, x)


def _panel(axes: Any, here: Sequence[ContextUseRow], chance: float | None) -> None:
    for control in sorted({row.control for row in here}):
        line = sorted((row for row in here if row.control == control), key=lambda row: row.keep_last)
        keeps = [max(row.keep_last, 1) for row in line]
        values = [row.controlled for row in line]
        # the paired difference's interval, drawn around the controlled score
        errors = [
            [max(0.0, row.controlled - (row.intact + row.ci_low)) for row in line],
            [max(0.0, (row.intact + row.ci_high) - row.controlled) for row in line],
        ]
        axes.errorbar(keeps, values, yerr=errors, marker="o", capsize=3, label=control,
                      color=COLOURS.get(control))  # fmt: skip
    if here:
        axes.axhline(here[0].intact, color="grey", label="intact")
    if chance is not None:
        axes.axhline(chance, color="black", linestyle=":", label="chance")
    axes.set_xscale("symlog", linthresh=1)
    axes.set_xlabel("tokens kept intact (K; 0 drawn at 1)")
    axes.legend(fontsize="small")
