"""``presses.md``, ``presses.json`` and ``presses.png``: each press × ratio paired against the full cache.

One row per press × ratio × x value (prefix length, document length …; and pooled over every x when there
are several): the full-cache and the pressed score on the instances both runs scored, their paired
difference with its 95% interval (by book where rows name five or more books), its p and the p adjusted
by Holm over every row of the page (:mod:`longread.report.paired`), the sentence the claim rule allows
(:mod:`longread.metrics.claims`), the cache the press kept (tokens, mean over pressed layers, and
MB against the full cache's), and the setting's wall time and peak memory. The plot: per x value, the
score against the ratio, one line per press, the full cache drawn across.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import mean
from typing import Any

from matplotlib.figure import Figure

from longread.errors import LongreadError
from longread.evaluation.registry import make_task
from longread.files import atomic_save_png, atomic_write_text, finite_or_none
from longread.metrics.claim_words import sentence
from longread.metrics.claims import CLAIM_RULE
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
from longread.report.paired import ALL_X, PairedDifference, paired_differences
from longread.report.press_runs import PressRun
from longread.runs.layout import read_samples

PRESSES_MD = "presses.md"
PRESSES_JSON = "presses.json"
PRESSES_PNG = "presses.png"
LOSES = ("the press loses context the model used", "the pressed cache does better")


@dataclass(frozen=True)
class CacheGeometry:
    """Bytes one cache entry takes per layer (keys and values), and each layer's window (None: full)."""

    bytes_per_entry: int
    windows: tuple[int | None, ...]

    def full_bytes(self, tokens: int) -> int:
        return sum(min(tokens, w - 1) if w else tokens for w in self.windows) * self.bytes_per_entry


@dataclass(frozen=True)
class Section:
    """More for the page, made by a layer above (the planted copies' horizons): markdown lines put before
    the table, a JSON entry and the files it wrote."""

    lines: Sequence[str]
    payload: Mapping[str, Any]
    files: Sequence[Path]


@dataclass(frozen=True)
class PressRow:
    x: Any
    press: str
    ratio: float
    metric: str
    paired: int
    full: float
    pressed: float
    difference: float
    ci_low: float
    ci_high: float
    p: float | None
    claim: str
    bound: float | None
    sentence: str
    level: str
    books: int | None
    context_tokens: float | None
    """Mean context tokens read under the press (at this x)."""
    kept_cache_tokens: float | None
    """Mean cache entries the press kept, over the pressed layers and the samples."""
    kept_cache_mb: float | None
    full_cache_mb: float | None
    """The same contexts' cache without a press (sliding layers hold their window either way)."""
    seconds: float | None
    peak_rss_mb: float | None
    p_adjusted: float | None = None
    """Holm-adjusted over the page's family (what the claim uses)."""


def _cache_at(path: Path, field: str, geometry: CacheGeometry | None) -> dict[Any, dict[str, float]]:
    """Per x (and pooled): mean context tokens, kept entries, kept and full cache MB of a pressed run."""
    groups: dict[Any, list[dict[str, Any]]] = {}
    for row in read_samples(path):
        if isinstance(row.get("kept_cache_tokens"), int | float):
            groups.setdefault(row.get(field), []).append(row)
            groups.setdefault(ALL_X, []).append(row)
    out: dict[Any, dict[str, float]] = {}
    for x, rows in groups.items():
        facts = {
            "context_tokens": mean(float(r["context_tokens_pressed"]) for r in rows),
            "kept_cache_tokens": mean(float(r["kept_cache_tokens"]) for r in rows),
        }
        if geometry is not None:
            mb = 1024 * 1024
            facts["kept_cache_mb"] = mean(
                sum(r["kept_cache_per_layer"]) * geometry.bytes_per_entry / mb for r in rows
            )
            facts["full_cache_mb"] = mean(
                geometry.full_bytes(int(r["context_tokens_pressed"])) / mb for r in rows
            )
        out[x] = facts
    return out


def press_rows(runs: Sequence[PressRun], geometry: CacheGeometry | None) -> tuple[list[PressRow], RunReport]:
    """Every pressed run against the full-cache run (the first), per x and pooled; and that run, loaded."""
    runs = [run for run in runs if run.refused is None]
    reports = load_runs([run.path for run in runs])
    first = reports[0]
    metric = next(m for m in make_task(first.task).metrics() if m.name == first.primary_metric)
    found: list[tuple[PairedDifference, PressRun, Mapping[str, float]]] = []
    for run, report in zip(runs[1:], reports[1:], strict=True):
        assert run.press is not None
        differences = paired_differences([first, report], ())
        if len({d.x for d in differences}) > 1:
            differences += paired_differences([first, report], (), pool_x=True)
        if not differences:
            raise LongreadError(f"{run.path} shares no instance with the full-cache run {first.path}")
        cache = _cache_at(run.path, first.x_axis.field, geometry)
        found += [(d, run, cache.get(d.x, {})) for d in differences]
    adjusted = adjusted_p([d for d, _, _ in found])
    rows = [
        _row(d, run, cache, metric.higher_is_better, p)
        for (d, run, cache), p in zip(found, adjusted, strict=True)
    ]
    rows.sort(key=lambda r: (r.x == ALL_X, str(r.x), r.press, r.ratio))
    return rows, first


def _row(d: PairedDifference, run: PressRun, cache: Mapping[str, float], higher: bool,
         p_adjusted: float | None) -> PressRow:  # fmt: skip
    assert run.press is not None
    said = evidence(d, p_adjusted)
    claimed = said.claim()
    words = sentence(f"{run.press.name} at {run.press.ratio:g}", d.metric, said, higher, LOSES)
    return PressRow(
        x=d.x, press=run.press.name, ratio=run.press.ratio, metric=d.metric, paired=d.paired,
        full=d.value_first, pressed=d.value_later, difference=d.difference, ci_low=d.ci_low,
        ci_high=d.ci_high, p=d.p, claim=claimed.kind, bound=claimed.bound, sentence=words,
        level=d.level, books=d.books, context_tokens=cache.get("context_tokens"), p_adjusted=p_adjusted,
        kept_cache_tokens=cache.get("kept_cache_tokens"), kept_cache_mb=cache.get("kept_cache_mb"),
        full_cache_mb=cache.get("full_cache_mb"),
        seconds=run.cost.seconds if run.cost else None,
        peak_rss_mb=run.cost.peak_rss_mb if run.cost else None,
    )  # fmt: skip


def _fmt(value: float | None, digits: int = 1) -> str:
    return "" if value is None or not math.isfinite(value) else f"{value:,.{digits}f}"


def write_presses(
    runs: Sequence[PressRun], out: Path, geometry: CacheGeometry | None, section: Section | None = None
) -> list[Path]:
    """The three files in ``out`` (and ``section``'s); returns their paths."""
    rows, first = press_rows(runs, geometry)
    label, field = first.label, first.x_axis.label
    full = runs[0].cost
    lines = [
        f"# KV-cache presses against the full cache — {label} on {first.task}",
        "",
        "Each press × ratio is paired with the full-cache run instance by instance: difference = pressed − "
        f"full, with a 95% interval that {level_words([r.level for r in rows], any(r.books for r in rows))}; "
        "p goes with the interval (right/wrong metrics: the larger of McNemar's exact p and the clustered t "
        f"test's), {family_words([r.p_adjusted for r in rows])}. "
        f"Rule: {CLAIM_RULE}. The press compresses the context "
        "only (never the question or the candidates); kept = cache entries per pressed layer (mean). "
        "Peak RSS: the process's, sampled while the setting ran; the settings share one process, so after "
        "the first it is an upper bound (bench/presses_memory.py measures each in a process of its own).",
        "",
        *(section.lines if section else ()),
        f"| {field} | press | ratio | "
        + DIFFERENCE_HEADER.format(a="full", b="pressed")
        + " | kept tokens | of context | cache MB kept / full | seconds | peak RSS MB |",
        "| ---: | --- | ---: | " + DIFFERENCE_ALIGN + " | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        cells = difference_cells(r.paired, r.full, r.pressed, r.difference, r.ci_low, r.ci_high, r.p,
                                 r.p_adjusted)  # fmt: skip
        lines.append(
            f"| {r.x} | {r.press} | {r.ratio:g} | {cells} | "
            f"{_fmt(r.kept_cache_tokens)} | {_fmt(r.context_tokens)} | "
            f"{_fmt(r.kept_cache_mb, 2)} / {_fmt(r.full_cache_mb, 2)} | {_fmt(r.seconds)} | "
            f"{_fmt(r.peak_rss_mb)} |"
        )
    if full is not None:
        lines += ["", f"The full-cache run: {full.seconds:,.1f} s, peak RSS {full.peak_rss_mb:,.1f} MB."]
    refused = [run for run in runs if run.refused is not None]
    if refused:
        lines += ["", f"Refused ({len(refused)}): kvpress could not run them on this model.", ""]
        lines += [f"- {run.press}: {run.refused}" for run in refused]
    lines += [
        "",
        *(f"- {field} {r.x}: {r.sentence}." for r in rows),
        "",
        f"![score against ratio]({PRESSES_PNG})",
        "",
    ]
    md, js = out / PRESSES_MD, out / PRESSES_JSON
    atomic_write_text(md, "\n".join(lines))
    payload = {
        "full": str(runs[0].path),
        "runs": [
            {
                "press": str(r.press) if r.press else None,
                "path": str(r.path),
                "failed": r.failed,
                "refused": r.refused,
                "cost": asdict(r.cost) if r.cost else None,
            }
            for r in runs
        ],
        "bytes_per_entry": geometry.bytes_per_entry if geometry else None,
        "rows": [finite_or_none(asdict(row)) for row in rows],
        "rule": CLAIM_RULE,
        **(section.payload if section else {}),
    }
    atomic_write_text(js, json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")
    return [md, js, plot_presses(rows, field, out / PRESSES_PNG), *(section.files if section else ())]


def plot_presses(rows: Sequence[PressRow], x_label: str, path: Path) -> Path:
    """Per x value, the score against the ratio: one line per press (from the full cache at ratio 0, each
    press's points shifted a little sideways so that equal scores do not hide each other), the full cache
    dashed across, each pressed point with its interval's width around the full score."""
    per_x = list(dict.fromkeys(str(r.x) for r in rows if r.x != ALL_X)) or [ALL_X]
    figure = Figure(figsize=(5.0 * len(per_x), 4.0), dpi=130, layout="constrained")
    axes = figure.subplots(1, len(per_x), squeeze=False)[0]
    for axis, x in zip(axes, per_x, strict=True):
        chosen = [r for r in rows if str(r.x) == x]
        if not chosen:
            continue
        full = chosen[0].full
        axis.axhline(full, color="grey", linestyle="--", label="full cache")
        presses = sorted({r.press for r in chosen})
        for index, press in enumerate(presses):
            shift = (index - (len(presses) - 1) / 2) * 0.012  # lines that agree stay visible side by side
            points = sorted(
                (r.ratio + shift, r.pressed, r.ci_low, r.ci_high) for r in chosen if r.press == press
            )
            ratios = [0.0, *(p[0] for p in points)]
            scores = [full, *(p[1] for p in points)]
            line = axis.plot(ratios, scores, marker="o", label=press)[0]
            for ratio, _, low, high in points:
                axis.vlines(ratio, full + low, full + high, color=line.get_color(), alpha=0.35, linewidth=4)
        axis.set_title(f"{x_label} {x}")
        axis.set_xlabel("compression ratio (share of the context's cache dropped)")
        axis.set_ylabel(chosen[0].metric)
        axis.legend(fontsize=8)
    return atomic_save_png(figure, path)
