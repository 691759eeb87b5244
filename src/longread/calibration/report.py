"""``calibration.md``, ``calibration.json`` and ``calibration.png``: what the planted copy showed.

The page gives the rule, one table row per prefix length × distance × control × K (and the intact row
per distance), the verdicts counted, and the copy horizon. The plot: per prefix length, accuracy against
the distance of the copy — unplanted (dashed) and planted intact (black), and the planted run under each
control × K (one line each), with the intact gain's interval drawn as a band.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from longread.calibration.verdicts import HORIZON_P, CalibrationRow, Horizon
from longread.files import atomic_save_png, atomic_write_text
from longread.metrics.claim_words import interval as interval_cell
from longread.metrics.claim_words import p_cell
from longread.metrics.claim_words import signed as signed_cell
from longread.metrics.claims import CLAIM_RULE, family_size

REPORT_MD = "calibration.md"
REPORT_JSON = "calibration.json"
REPORT_PNG = "calibration.png"


def _keep(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


def horizon_sentence(h: Horizon) -> str:
    if h.distance is None:
        first = "" if h.below is None else f" (not even at {h.below:,} tokens)"
        return (
            f"at prefix length {h.prefix_length:,}: no planted copy was shown to be used{first} — the model "
            "does not copy from this far, or the backend did not read the context"
        )
    bound = "" if h.below is None else f", and not shown at {h.below:,}"
    return (
        f"at prefix length {h.prefix_length:,}: the copy horizon is at least {h.distance:,} tokens (gain "
        f"{signed_cell(h.gain)} [{signed_cell(h.ci_low)}, {signed_cell(h.ci_high)}], p {p_cell(h.p)}"
        f"{bound}){_gap(h)}"
    )


def _gap(h: Horizon) -> str:
    """A copy found again past a distance where it was not: said, never taken as the horizon."""
    if not h.found_beyond:
        return ""
    farther = ", ".join(f"{d:,}" for d in h.found_beyond)
    return (
        f"; a gap: found again at {farther} tokens after not being shown at {h.below:,} — the horizon stops "
        "at the first distance not shown"
    )


def _header(model: str, copy_tokens: int, rows: Sequence[CalibrationRow]) -> list[str]:
    """The page's title, its rule and the table's head."""
    tested = (
        [r.p_adjusted for r in rows]
        + [r.control_p_adjusted for r in rows]
        + [r.unplanted_p_adjusted for r in rows]
    )
    return [
        f"# Calibration — {model} on planted ChapterBreak copies",
        "",
        f"The gold continuation's first {copy_tokens} tokens are copied into the prefix D tokens "
        "before its end (`planted.jsonl`); the unplanted and planted instances are read intact and under "
        "every control × K. Gain = planted − unplanted accuracy, paired by instance; a control's effect = "
        "planted under the control − planted intact. Intervals: 95%, by book with five or more books (the "
        "hull of CR2 and Tango's score interval), else by instance (Tango's); p goes with the interval and "
        f"is Holm-adjusted over the page's {family_size(tested)} comparisons. Rule: {CLAIM_RULE}. The copy "
        f"horizon needs, at every distance up to it, an effect by the rule whose own p is below {HORIZON_P}.",
        "",
        "| prefix | D | control | K | copy | paired | unplanted | planted | gain [95% CI] | Holm p | "
        "control's effect [95% CI] | Holm p | verdict |",
        "| ---: | ---: | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]


def write_calibration(
    out: Path,
    rows: Sequence[CalibrationRow],
    horizons: Sequence[Horizon],
    plan: Any,
    lengths: Sequence[int],
    model: str,
) -> tuple[Path, Path, Path]:
    verdicts = Counter(row.verdict for row in rows if row.control != "intact")
    lines = _header(model, plan.copy_tokens, rows)
    for r in rows:
        effect = (
            "—" if r.control_effect is None
            else interval_cell(r.control_effect, r.control_ci_low, r.control_ci_high)
        )  # fmt: skip
        lines.append(
            f"| {r.prefix_length:,} | {r.distance:,} | {r.control} | {_keep(r.keep_last)} "
            f"| {r.position} | {r.paired} | {r.unplanted:.3f} | {r.planted:.3f} | "
            f"{interval_cell(r.planted_gain, r.ci_low, r.ci_high)} | {p_cell(r.p_adjusted)} | {effect} | "
            f"{p_cell(r.control_p_adjusted)} | "
            f"**{r.verdict}** |"
        )
    lines += ["", "Verdicts: " + (", ".join(f"{n} {v}" for v, n in sorted(verdicts.items())) or "none"), ""]
    lines += ["Where nothing was planted (unplanted under the control − unplanted intact):", ""]
    seen: set[tuple[int, str, int | None]] = set()
    for r in rows:
        key = (r.prefix_length, r.control, r.keep_last)
        if r.control == "intact" or key in seen:
            continue
        seen.add(key)
        lines.append(
            f"- prefix {r.prefix_length:,}, {r.control}, K = {_keep(r.keep_last)}: "
            f"{signed_cell(r.unplanted_effect)} [{signed_cell(r.unplanted_ci_low)}, "
            f"{signed_cell(r.unplanted_ci_high)}], Holm-adjusted p {p_cell(r.unplanted_p_adjusted)}: "
            f"{r.unplanted_claim}"
        )
    lines.append("")
    lines += [f"- Copy horizon {horizon_sentence(h)}." for h in horizons]
    lines += [
        "",
        "copy: where the copy lies for the control — perturbed (K ≤ D − copy: the control reaches all of "
        "it), kept (K ≥ D: none of it), partly. Verdicts: detects (perturbed, and the gain is gone), misses "
        "(perturbed, and the gain stays), keeps (kept, and the gain stays), false alarm (kept, yet the "
        "control moved the planted score), partial, inconclusive.",
        "",
        f"![accuracy against the copy's distance]({REPORT_PNG})",
        "",
    ]
    md = out / REPORT_MD
    atomic_write_text(md, "\n".join(lines))
    payload = {
        "model": model,
        "distances": list(plan.distances),
        "controls": list(plan.controls),
        "keep_last": list(plan.keep_last),
        "copy_tokens": plan.copy_tokens,
        "seed": plan.seed,
        "prefix_lengths": list(lengths),
        "rule": CLAIM_RULE,
        "horizon_p": HORIZON_P,
        "rows": [row.as_dict() for row in rows],
        "copy_horizon": [vars(h) for h in horizons],
        "verdicts": dict(sorted(verdicts.items())),
    }
    js = out / REPORT_JSON
    atomic_write_text(js, json.dumps(payload, indent=2, sort_keys=True) + "\n")
    return md, js, plot_calibration(rows, lengths, out / REPORT_PNG)


def plot_calibration(rows: Sequence[CalibrationRow], lengths: Sequence[int], path: Path) -> Path:
    figure = Figure(figsize=(5.5 * len(lengths), 4.2), dpi=130, layout="constrained")
    for index, length in enumerate(lengths):
        axes = figure.add_subplot(1, len(lengths), index + 1)
        here = [r for r in rows if r.prefix_length == length]
        intact = sorted((r for r in here if r.control == "intact"), key=lambda r: r.distance)
        xs = [r.distance for r in intact]
        axes.plot(xs, [r.unplanted for r in intact], "k--s", label="unplanted, intact")
        axes.plot(xs, [r.planted for r in intact], "k-o", label="planted, intact")
        low = [r.unplanted + r.ci_low for r in intact]
        high = [r.unplanted + r.ci_high for r in intact]
        axes.fill_between(xs, low, high, color="grey", alpha=0.2, label="planted gain, 95% CI")
        for control, keep in sorted({(r.control, r.keep_last or 0) for r in here if r.control != "intact"}):
            line = sorted(
                (r for r in here if (r.control, r.keep_last) == (control, keep)), key=lambda r: r.distance
            )
            axes.plot([r.distance for r in line], [r.planted for r in line], marker=".", alpha=0.8,
                      label=f"planted, {control} K={keep:,}")  # fmt: skip
        axes.set_xscale("log", base=2)
        axes.set_xticks(xs, [f"{x:,}" for x in xs])
        axes.minorticks_off()
        axes.set_xlabel("distance of the planted copy (tokens before the prefix's end)")
        axes.set_ylabel("accuracy")
        axes.set_ylim(-0.02, 1.02)
        axes.set_title(f"prefix length {length:,}")
        axes.legend(fontsize="x-small")
    return atomic_save_png(figure, path)
