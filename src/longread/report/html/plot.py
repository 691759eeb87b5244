"""The memory curve as inline SVG: a line per run with its 95% band, points that carry n and the interval.

Drawn in Python so the page needs no plotting library at view time. x values that are all
positive numbers on a ``log2`` axis are placed on a log scale, other numbers linearly, and
text values (length buckets) at even steps in the runs' order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from longread.report.load import MetricValue, RunReport
from longread.report.table import format_x

WIDTH, HEIGHT = 760, 380
LEFT, RIGHT, TOP, BOTTOM = 64, 20, 20, 52
PASS_THROUGH = ' pointer-events="none"'
"""Bands and lines let the mouse through, so every run's points can be hovered, not only the last run's."""
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def run_colour(index: int) -> str:
    return COLOURS[index % len(COLOURS)]


def memory_curve_svg(runs: Sequence[RunReport], run_ids: Sequence[str]) -> str:
    """An ``<svg>`` of each run's primary metric against its x-axis; every point has data-* for hover."""
    xs = list(dict.fromkeys(x for run in runs for x in run.points))
    place_x = _x_placer(xs, runs[0].x_axis.scale if runs else "linear")
    values = [m for run in runs for x in run.points if (m := run.metric(x, run.primary_metric)) is not None]
    proportion = any(m.is_proportion for m in values)
    y_low, y_high = _y_range(values, proportion)

    def place_y(value: float) -> float:
        span = (y_high - y_low) or 1.0
        return TOP + (HEIGHT - TOP - BOTTOM) * (1 - (value - y_low) / span)

    parts = [
        f'<svg class="curve" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        'role="img" aria-label="memory curve">',
        *_axes(xs, runs, place_x, place_y, y_low, y_high, proportion),
    ]
    for index, (run, run_id) in enumerate(zip(runs, run_ids, strict=True)):
        parts.append(_series(run, run_id, run_colour(index), place_x, place_y))
    parts.append("</svg>")
    return "\n".join(parts)


def _x_placer(xs: list[int | float | str], scale: str) -> dict[int | float | str, float]:
    inner = WIDTH - LEFT - RIGHT
    numeric = [x for x in xs if isinstance(x, int | float) and not isinstance(x, bool)]
    if len(numeric) != len(xs) or not xs:
        step = inner / max(len(xs), 1)
        return {x: LEFT + step * (i + 0.5) for i, x in enumerate(xs)}
    use_log = scale == "log2" and all(x > 0 for x in numeric)
    coords = [math.log2(float(x)) if use_log else float(x) for x in numeric]
    low, high = min(coords), max(coords)
    span = (high - low) or 1.0
    margin = 0.04 * inner
    return {
        x: LEFT + margin + (inner - 2 * margin) * ((c - low) / span if high > low else 0.5)
        for x, c in zip(numeric, coords, strict=True)
    }


def _y_range(values: Sequence[MetricValue], proportion: bool) -> tuple[float, float]:
    if proportion:
        return 0.0, 1.0
    bounds = [
        b for m in values for b in (m.value, m.ci_low, m.ci_high) if b is not None and not math.isnan(b)
    ]
    if not bounds:
        return 0.0, 1.0
    low, high = min(bounds), max(bounds)
    pad = 0.05 * ((high - low) or abs(high) or 1.0)
    return low - pad, high + pad


def _axes(
    xs: list[int | float | str],
    runs: Sequence[RunReport],
    place_x: dict[int | float | str, float],
    place_y: object,
    y_low: float,
    y_high: float,
    proportion: bool,
) -> list[str]:
    assert callable(place_y)
    scale = runs[0].x_axis.scale if runs else "linear"
    bottom, right = HEIGHT - BOTTOM, WIDTH - RIGHT
    out = [
        f'<line x1="{LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#444"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}" stroke="#444"/>',
    ]
    for x in xs:
        px = place_x[x]
        out.append(
            f'<text x="{px:.1f}" y="{bottom + 16}" text-anchor="middle" font-size="11">'
            f"{escape(format_x(x, scale))}</text>"
        )
    for i in range(6):
        value = y_low + (y_high - y_low) * i / 5
        py = place_y(value)
        label = f"{100 * value:.0f}%" if proportion else f"{value:.3g}"
        out.append(f'<line x1="{LEFT}" y1="{py:.1f}" x2="{right}" y2="{py:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{LEFT - 6}" y="{py + 4:.1f}" text-anchor="end" font-size="11">{label}</text>')
    chance = {run.chance for run in runs if run.chance is not None}
    if proportion and len(chance) == 1:
        py = place_y(chance.pop())
        out.append(
            f'<line x1="{LEFT}" y1="{py:.1f}" x2="{right}" y2="{py:.1f}" stroke="#999" '
            'stroke-dasharray="2 3"><title>chance</title></line>'
        )
    x_label = escape(runs[0].x_axis.label if runs else "x")
    metric = escape(runs[0].primary_metric.replace("_", " ") if runs else "")
    out.append(f'<text x="{(LEFT + right) / 2}" y="{HEIGHT - 10}" text-anchor="middle">{x_label}</text>')
    out.append(
        f'<text x="14" y="{(TOP + bottom) / 2}" text-anchor="middle" '
        f'transform="rotate(-90 14 {(TOP + bottom) / 2})">{metric}</text>'
    )
    return out


def _series(
    run: RunReport, run_id: str, colour: str, place_x: dict[int | float | str, float], place_y: object
) -> str:
    assert callable(place_y)
    points = [
        (x, point.n, m)
        for x, point in run.points.items()
        if (m := point.metrics.get(run.primary_metric)) is not None and m.value is not None
    ]
    dash = ' stroke-dasharray="6 4"' if run.baseline else ""
    out = [f'<g class="series" data-run="{run_id}">']
    band = [(place_x[x], place_y(m.ci_high)) for x, _, m in points if m.ci_high is not None]
    band += [(place_x[x], place_y(m.ci_low)) for x, _, m in reversed(points) if m.ci_low is not None]
    if len(band) == 2 * len(points) and points:
        coords = " ".join(f"{px:.1f},{py:.1f}" for px, py in band)
        out.append(
            f'<polygon points="{coords}" fill="{colour}" fill-opacity="0.15" stroke="none"{PASS_THROUGH}/>'
        )
    line = " ".join(f"{place_x[x]:.1f},{place_y(m.value):.1f}" for x, _, m in points)
    out.append(
        f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"{dash}{PASS_THROUGH}/>'
    )
    for x, n, m in points:
        assert m.value is not None
        text = _point_text(run, x, n, m)
        out.append(
            f'<circle class="point" cx="{place_x[x]:.1f}" cy="{place_y(m.value):.1f}" r="5" '
            f'fill="{colour}" data-tip="{escape(text)}"><title>{escape(text)}</title></circle>'
        )
    out.append("</g>")
    return "\n".join(out)


def _point_text(run: RunReport, x: int | float | str, n: int, metric: MetricValue) -> str:
    assert metric.value is not None
    scale, suffix = (100.0, "%") if metric.is_proportion else (1.0, "")
    text = f"{run.label} — {run.x_axis.label} {format_x(x, run.x_axis.scale)}: n={n}, "
    text += f"{run.primary_metric.replace('_', ' ')} {scale * metric.value:.1f}{suffix}"
    if metric.ci_low is not None and metric.ci_high is not None:
        text += f" [{scale * metric.ci_low:.1f}–{scale * metric.ci_high:.1f}{suffix}]"
    return text
