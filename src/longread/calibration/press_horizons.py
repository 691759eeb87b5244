"""Each press's copy horizon: how far back a planted copy survives the compressed cache.

``longread presses chapterbreak … --distances D1,D2`` plants a copy of each chosen instance's gold opening
D tokens before its prefix's end (as ``longread calibrate`` does: ``unplanted.jsonl``, ``planted.jsonl``)
and runs the full cache and every press × ratio on both (``out/`` and ``out/planted/``). Per setting,
prefix length and D: the planted gain — planted − unplanted accuracy under that same setting, paired by
instance, its interval by book with five or more books (:func:`longread.calibration.verdicts.intact_row`),
every test of the page Holm-adjusted together — and the copy horizon
(:func:`~longread.calibration.verdicts.copy_horizon`: the largest D such that the gain is an effect by the
rule with its own p < 0.01 at every distance tried up to it). The full cache comes first: it is the planted
positive that shows the instrument sees a copy being used at all. Where it shows none, the page says that
the presses' nulls cannot be read as "keeps what the model read".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from matplotlib.figure import Figure

from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance
from longread.calibration.report import horizon_sentence
from longread.calibration.run import outcomes_of, placements, planted_sources
from longread.calibration.verdicts import (
    HORIZON_P,
    CalibrationRow,
    Family,
    Horizon,
    Outcomes,
    compare,
    copy_horizon,
    intact_row,
)
from longread.files import atomic_save_png, finite_or_none
from longread.metrics.claim_words import interval as interval_cell
from longread.metrics.claim_words import p_cell
from longread.metrics.paired import PairedScores
from longread.report.press_report import Section
from longread.report.press_runs import PressRun

HORIZON_PNG = "presses_horizon.png"
FULL = "full cache"


@dataclass(frozen=True)
class SettingHorizons:
    setting: str
    """``full cache`` or the press as given (``snapkv:0.5``)."""
    rows: tuple[CalibrationRow, ...]
    horizons: tuple[Horizon, ...]
    against_full: tuple[PairedScores | None, ...]
    """Per row: planted accuracy under the press − under the full cache (None for the full cache, or where
    the full cache was not run)."""
    against_p_adjusted: tuple[float | None, ...] = ()
    """Their p, Holm-adjusted over the page's family."""


def _at(outcomes: Outcomes, length: int) -> Outcomes:
    return {k: v for k, v in outcomes.items() if k[1] == length}


def press_horizons(
    unplanted: Sequence[PressRun],
    planted_runs: Sequence[PressRun],
    planted: Sequence[ChapterBreakInstance],
    lengths: Sequence[int],
) -> list[SettingHorizons]:
    """The planted gain per distance and the copy horizon, per setting (refused settings left out: the
    table of runs lists them)."""
    original, where = planted_sources(planted), placements(planted)
    cells = [
        (length, distance, placement) for length in lengths for distance, placement in sorted(where.items())
    ]
    # every comparison first: the page's tests are one family, adjusted together
    found: list[tuple[PressRun, list[PairedScores], tuple[PairedScores | None, ...]]] = []
    full: dict[int, Outcomes] | None = None
    for plain, copied in zip(unplanted, planted_runs, strict=True):
        if plain.refused is not None or copied.refused is not None:
            continue
        before = outcomes_of(plain.path).get(0, {})
        after = outcomes_of(copied.path, original)
        gains = [
            compare(_at(before, length), _at(after.get(distance, {}), length))
            for length, distance, _ in cells
        ]
        if plain.press is None:
            full = after
            found.append((plain, gains, (None,) * len(gains)))
            continue
        against = tuple(
            None if full is None else compare(_at(full.get(d, {}), length), _at(after.get(d, {}), length))
            for length, d, _ in cells
        )
        found.append((plain, gains, against))
    family = Family([t for _, gains, against in found for t in (*gains, *against)])
    settings: list[SettingHorizons] = []
    for plain, gains, against in found:
        rows = [
            intact_row(length, placement, gain, family)
            for (length, _, placement), gain in zip(cells, gains, strict=True)
        ]
        horizons = tuple(copy_horizon(rows, length) for length in lengths)
        name = FULL if plain.press is None else str(plain.press)
        adjusted = tuple(None if a is None else family.p(a) for a in against)
        settings.append(SettingHorizons(name, tuple(rows), horizons, against, adjusted))
    return settings


def _horizon(h: Horizon, setting: str) -> str:
    if h.distance is not None or setting == FULL:
        return horizon_sentence(h)
    first = "" if h.below is None else f" (not even at {h.below:,} tokens)"
    return (
        f"at prefix length {h.prefix_length:,}: no planted copy was shown to be used{first} — the press "
        "dropped it, or too few instances show it"
    )


def _positive(full: SettingHorizons | None) -> list[str]:
    """Whether the full cache found the planted copy: the instrument's own check, said first."""
    if full is None:
        return ["The full-cache runs did not run: no planted positive, so no press's null below can be read."]
    seen = [h for h in full.horizons if h.distance is not None]
    if not seen:
        return [
            "**The full cache shows no planted copy used at any distance**: this instrument did not find a "
            'planted positive here, so a press\'s null below cannot be read as "keeps what the model read" '
            "— plant nearer, or use more instances."
        ]
    return [
        "The instrument finds a planted positive: with the full cache, "
        + "; ".join(horizon_sentence(h) for h in seen)
        + ". A press that keeps what the model read keeps that horizon."
    ]


def horizon_section(settings: Sequence[SettingHorizons], copy_tokens: int, out: Path) -> Section:
    """The markdown, the JSON entry and the plot (``presses_horizon.png``) of the horizons."""
    full = next((s for s in settings if s.setting == FULL), None)
    lines = [
        "## How far back a planted copy survives each press",
        "",
        f"A copy of each instance's gold opening ({copy_tokens} tokens) was planted D tokens before the "
        "prefix's end (`planted.jsonl`; the unplanted instances in `unplanted.jsonl`), and every setting "
        "ran on both. Gain = planted − unplanted accuracy under the same setting, paired by instance. The "
        "copy horizon: the largest D such that the gain is established (an effect by the rule, its own p "
        f"< {HORIZON_P}) at every distance tried up to it; p columns are Holm-adjusted over the page's "
        "comparisons.",
        "",
        *_positive(full),
        "",
        "Gain: planted − unplanted under the setting. Against the full cache: planted accuracy under the "
        "press − under the full cache, the same planted instances (what the press lost of the copy).",
        "",
        "| prefix | setting | D | paired | unplanted | planted | gain [95% CI] | p | against the full cache "
        "[95% CI] | p |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in settings:
        against_p = s.against_p_adjusted or (None,) * len(s.rows)
        for r, a, a_p in zip(s.rows, s.against_full, against_p, strict=True):
            versus = "—" if a is None else interval_cell(a.difference, a.ci_low, a.ci_high)
            lines.append(
                f"| {r.prefix_length:,} | {s.setting} | {r.distance:,} | {r.paired} | {r.unplanted:.2f} | "
                f"{r.planted:.2f} | {interval_cell(r.planted_gain, r.ci_low, r.ci_high)} | "
                f"{p_cell(r.p_adjusted)} | {versus} | {p_cell(a_p)} |"
            )
    lines += ["", *(f"- {s.setting} {_horizon(h, s.setting)}." for s in settings for h in s.horizons), ""]
    lines += [f"![planted gain against distance]({HORIZON_PNG})", ""]
    lines += ["## Each press against the full cache", ""]
    payload = {
        "copy_horizons": [
            {
                "setting": s.setting,
                "rows": [r.as_dict() for r in s.rows],
                "horizons": [asdict(h) for h in s.horizons],
                "against_full": [None if a is None else finite_or_none(asdict(a)) for a in s.against_full],
            }
            for s in settings
        ]
    }
    return Section(lines, payload, [plot_horizons(settings, out / HORIZON_PNG)])


def plot_horizons(settings: Sequence[SettingHorizons], path: Path) -> Path:
    """Per prefix length, the planted gain against the distance: the full cache black, one line per press
    × ratio, each point's 95% interval drawn as a bar."""
    lengths = sorted({r.prefix_length for s in settings for r in s.rows}) or [0]
    figure = Figure(figsize=(5.5 * len(lengths), 4.2), dpi=130, layout="constrained")
    axes = figure.subplots(1, len(lengths), squeeze=False)[0]
    for axis, length in zip(axes, lengths, strict=True):
        for index, s in enumerate(settings):
            rows = sorted((r for r in s.rows if r.prefix_length == length), key=lambda r: r.distance)
            if not rows:
                continue
            shift = 1 + (index - (len(settings) - 1) / 2) * 0.02  # equal gains stay visible side by side
            xs = [r.distance * shift for r in rows]
            style = {"color": "black", "linewidth": 2.0} if s.setting == FULL else {}
            line = axis.plot(xs, [r.planted_gain for r in rows], marker="o", label=s.setting, **style)[0]
            axis.vlines(xs, [r.ci_low for r in rows], [r.ci_high for r in rows], color=line.get_color(),
                        alpha=0.35, linewidth=4)  # fmt: skip
        axis.axhline(0, color="grey", linestyle=":")
        axis.set_xscale("log", base=2)
        distances = sorted({r.distance for s in settings for r in s.rows})
        axis.set_xticks(distances, [f"{d:,}" for d in distances])
        axis.minorticks_off()
        axis.set_xlabel("distance of the planted copy (tokens before the prefix's end)")
        axis.set_ylabel("planted gain (accuracy)")
        axis.set_title(f"prefix length {length:,}")
        axis.legend(fontsize="x-small")
    return atomic_save_png(figure, path)
