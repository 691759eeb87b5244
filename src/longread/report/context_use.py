"""The context-use report: did the model use the distant context?

Each controlled run (``shuffle`` / ``replace`` / ``none`` beyond the last K tokens) is paired with the
intact run instance by instance (:mod:`longread.report.paired`): per x value (prefix length, reading
position, document length) the intact score, the controlled score, their paired difference with a 95%
bootstrap interval (books resampled with all their instances where rows name them) and, for right/wrong
metrics, McNemar's p — and one sentence a reader can quote, no larger than the claim rule of
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
from longread.metrics.claims import ALPHA, CLAIM_RULE, MIN_PAIRED, claim, p_text
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
    """effect, not established, null or too few (:mod:`longread.metrics.claims`)."""
    bound: float | None = None
    """A null: the largest difference its interval allows."""
    resampled: str = "instances"
    """What the interval resampled: books (with all their instances) or instances."""
    books: int | None = None


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


def _number(value: float) -> str:
    return f"{value:+.2f}".replace("-", "−")


USES = ("the model uses the distant context", "the model does better without it")


def sentence(control: str, keep_last: int, metric: str, difference: float, low: float, high: float,
             p: float | None, higher_is_better: bool, paired: int = MIN_PAIRED, *, what: str | None = None,
             meanings: tuple[str, str] = USES) -> str:  # fmt: skip
    """One quotable sentence on one paired difference (values as fractions for right/wrong metrics),
    by the rule of :mod:`longread.metrics.claims`: an effect needs the interval to exclude 0 and, for a
    right/wrong metric, McNemar's p < 0.05; a null says what size it rules out. ``what`` names the change
    (default: the control); ``meanings``: what a worse and a better score mean."""
    part = "the whole context" if keep_last == 0 else f"everything before the last {keep_last:,} tokens"
    what = what or f"{VERBS.get(control, control)} {part}"
    interval = f"{_number(difference)} [{_number(low)}, {_number(high)}]"
    said = claim(low, high, p, paired)
    p_part = "" if p is None else f", {p_text(p)}"
    if said.kind == "too few":
        change = _number(difference)
        return f"{what} changes {metric} by {change} on {paired} paired instance(s): too few to say"
    if said.kind == "null":
        assert said.bound is not None
        return (
            f"{what} changes {metric} by no more than ±{said.bound:.2f} (95%; difference {interval}"
            f"{p_part}, {paired} paired)"
        )
    verb = "lowers" if difference < 0 else "raises"
    if said.kind == "not established":
        why = "the interval holds 0" if low <= 0 <= high else f"McNemar's {p_text(p)} is not below {ALPHA}"
        return f"{what} {verb} {metric} by {interval}{p_part}: not established ({why})"
    worse = (difference < 0) == higher_is_better
    near, far = sorted((abs(low), abs(high)))
    size = f"{abs(difference):.2f} [{near:.2f}, {far:.2f}]"
    meaning = meanings[0] if worse else meanings[1]
    return f"{what} {verb} {metric} by {size}{'' if p is None else f' ({p_text(p)})'}: {meaning}"


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
    rows: list[ContextUseRow] = []
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
            rows += [_row(d, control, keep, known[name].higher_is_better) for d in differences]
    order = {name: index for index, name in enumerate(names)}
    rows.sort(key=lambda row: (order[row.metric], row.x == ALL_X, str(row.x), row.control, row.keep_last))
    return rows, runs, unpaired


def _row(d: PairedDifference, control: str, keep: int, higher_is_better: bool) -> ContextUseRow:
    words = sentence(
        control, keep, d.metric, d.difference, d.ci_low, d.ci_high, d.mcnemar_p, higher_is_better, d.paired
    )
    said = claim(d.ci_low, d.ci_high, d.mcnemar_p, d.paired)
    return ContextUseRow(
        x=d.x,
        control=control,
        keep_last=keep,
        metric=d.metric,
        paired=d.paired,
        intact=d.value_first,
        controlled=d.value_later,
        difference=d.difference,
        ci_low=d.ci_low,
        ci_high=d.ci_high,
        p=d.mcnemar_p,
        sentence=words,
        claim=said.kind,
        bound=said.bound,
        resampled=d.resampled,
        books=d.books,
    )


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
        "instance by instance: difference = controlled − intact, with a 95% paired bootstrap interval "
        f"that {_resampling(rows)}; p: McNemar, exact, two-sided, per instance (right/wrong metrics). "
        f"Rule: {CLAIM_RULE}.",
        "",
        f"| metric | {runs[0].x_axis.label} | control | K kept | paired | intact | controlled "
        "| difference [95% CI] | p |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        p = "" if row.p is None else ("< 0.001" if row.p < 0.001 else f"{row.p:.3f}")
        lines.append(
            f"| {row.metric} | {row.x} | {row.control} | {row.keep_last:,} | {row.paired} | "
            f"{row.intact:.3f} | {row.controlled:.3f} | {_number(row.difference)} "
            f"[{_number(row.ci_low)}, {_number(row.ci_high)}] | {p} |"
        )
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


def _resampling(rows: Sequence[ContextUseRow]) -> str:
    """How the intervals were drawn, as the page says it."""
    kinds = {row.resampled for row in rows}
    if kinds == {"books"}:
        return "resamples books, each with all its instances (instances of one book are not independent)"
    if "books" in kinds:
        return (
            "resamples books with all their instances where a comparison spans two or more books, "
            "else instances"
        )
    named = any(row.books for row in rows)
    why = "the instances come from one book" if named else "the rows name no book"
    return f"resamples instances ({why}: the interval speaks for these instances only)"


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
