"""``horizon.md``, ``horizon.json`` and ``horizon.png``: the campaign's answer per model × prefix length
(:mod:`longread.horizon.words`), every K tried, the copy horizon, the gate and the shortcut check."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from longread.calibration.report import horizon_sentence
from longread.files import atomic_write_text, finite_or_none
from longread.horizon import layout
from longread.horizon.campaign import CampaignRecord
from longread.horizon.plot import plot_horizon
from longread.horizon.tasks import Shortcuts
from longread.horizon.verdicts import Families, LengthAnswer
from longread.horizon.words import answer_sentence
from longread.metrics.claim_words import interval, p_cell
from longread.metrics.claims import CLAIM_RULE


def write_horizon(
    out: Path, record: CampaignRecord, answers: Sequence[LengthAnswer], families: Families
) -> tuple[Path, Path, Path]:
    plan = record.plan
    task = record.task
    books = len({task.book_of(i) for i in record.instances})
    shortcuts = _shortcut_scores(record)
    lines = [
        f"# How far back does the model read? {task.title}, {plan.control} before the last K tokens",
        "",
        f"{len(record.instances):,} {task.unit} chosen from {books:,} books; models: "
        f"{', '.join(record.models)}; "
        f"δ = {plan.delta:g}. Every comparison is paired on the instances every model fitted at that length. "
        f"Rule: {CLAIM_RULE}. Two families, each Holm-adjusted on its own: the {families.keeps.size} "
        f"used-context comparisons and the {families.calibration.size} calibration tests.",
        "",
        "## The answer",
        "",
        *[f"- {answer_sentence(a, plan.control, plan.delta, shortcuts[a.length].chance)}" for a in answers],
        "",
        "| model | L | instances (books) | intact | used context K | bound | next K below | copy horizon "
        "| calibrated |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |",
        *[_summary_row(a) for a in answers],
        "",
        "## Each K tried",
        "",
        *_search_words(plan.search),
        "| model | L | K | paired | intact | controlled | difference [95% CI] | p | Holm p | claim |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        *[_keep_row(a, r) for a in answers for r in a.keeps],
        "",
        "## The copy horizon and the gate",
        "",
        *[f"- {a.model}: copy horizon {horizon_sentence(a.horizon)}." for a in answers if a.horizon],
        *[f"- {a.model} at L = {a.length:,}: gate {_gate_words(a)}" for a in answers],
        "",
        *_left_out(out, record),
        *_shortcuts(record, shortcuts),
        f"![the change of accuracy against the tokens kept intact]({layout.REPORT_PNG})",
        "",
    ]
    md = out / layout.REPORT_MD
    atomic_write_text(md, "\n".join(lines))
    js = out / layout.REPORT_JSON
    payload = _payload(record, answers, shortcuts)
    atomic_write_text(js, json.dumps(payload, indent=2, sort_keys=True) + "\n")
    png = plot_horizon(answers, plan.prefix_lengths, plan.delta, plan.control, out / layout.REPORT_PNG)
    return md, js, png


def _search_words(search: str) -> list[str]:
    if search != "zero-first":
        return []
    return [
        "Searched K = 0 first: where that was a null it is the used context and no larger K ran (nothing "
        "is said of them); elsewhere the log grid went down from L/2 as usual, reusing the K = 0 run.",
        "",
    ]


def _summary_row(a: LengthAnswer) -> str:
    used = "—" if a.used is None else f"{a.used:,}"
    bound = "—" if a.bound is None else f"±{a.bound:.2f}"
    below = "—" if a.below is None else f"K = {a.below.keep:,}: {a.below.claim.kind}"
    horizon = "—" if a.horizon is None or a.horizon.distance is None else f"≥ {a.horizon.distance:,}"
    intact = "—" if a.intact is None else f"{a.intact:.3f}"
    return (
        f"| {a.model} | {a.length:,} | {a.paired:,} ({a.books or 0}) | {intact} | {used} | {bound} "
        f"| {below} | {horizon} | {'yes' if a.calibrated else 'no'} |"
    )


def _keep_row(a: LengthAnswer, r: Any) -> str:
    s = r.scores
    return (
        f"| {a.model} | {a.length:,} | {r.keep:,} | {s.n} | {s.mean_a:.3f} | {s.mean_b:.3f} | "
        f"{interval(s.difference, s.ci_low, s.ci_high)} | {p_cell(s.p)} | {p_cell(r.p_adjusted)} "
        f"| {r.claim.kind} |"
    )


def _gate_words(a: LengthAnswer) -> str:
    row = a.gate_row
    if row is None:
        return f"not run: {a.gate_reason}."
    effect = interval(row.control_effect, row.control_ci_low, row.control_ci_high)
    return (
        f"a copy {row.distance:,} tokens back, {row.control} at K = {row.keep_last:,}: planted gain under "
        f"the control {interval(row.planted_gain, row.ci_low, row.ci_high)} ({row.claim}), the control's "
        f"effect on the planted score {effect} ({row.control_claim}): **{row.verdict}**"
        + ("" if a.calibrated else f" — {a.gate_reason}")
        + "."
    )


def _left_out(out: Path, record: CampaignRecord) -> list[str]:
    lines = ["## What was left out", "", *_runs_not_asked(out, record)]
    for (model, length), here in sorted(record.lengths.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        others = len(here.fits.ids - record.common.get(length, frozenset()))
        lines.append(
            f"- {model} at L = {length:,}: fitted {len(here.fits.ids):,} of {len(record.instances):,}; "
            f"{here.fits.short:,} read fewer than L tokens, {here.fits.failed:,} failed (the intact run's "
            f"errors.jsonl), {others:,} fitted here but not by every model; a copy could be planted in "
            f"{len(here.plantable):,} (the others' gold or prefix cannot hold it); the copy horizon and the "
            f"gate compare the {len(record.planted_common.get(length, frozenset())):,} every model fitted "
            "and could plant."
        )
    return [*lines, ""]


def _runs_not_asked(out: Path, record: CampaignRecord) -> list[str]:
    """The K runs of this control kept in the folder that this search did not ask for (another
    ``--search``, grid or refinement made them): named, since the page's answer and family leave them out."""
    lines = []
    control = record.plan.control
    pattern = re.compile(rf"{re.escape(control)}-k(\d+)")
    for (model, length), here in sorted(record.lengths.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        asked = {step.keep for step in here.steps}
        kept = sorted(
            (int(found.group(1)) for run in layout.length_dir(out, model, length).glob(f"{control}-k*")
             if (found := pattern.fullmatch(run.name)) and (run / "samples.jsonl").is_file()),
            reverse=True,
        )  # fmt: skip
        unasked = [k for k in kept if k not in asked]
        if unasked:
            lines.append(
                f"- {model} at L = {length:,}: runs in the folder this search did not ask for, so not on "
                f"this page nor in its family: K = {', '.join(f'{k:,}' for k in unasked)} (made by another "
                "`--search`, grid or refinement; a page that chose among orders after seeing them would "
                "not hold its error rates)."
            )
    return lines


def _shortcut_scores(record: CampaignRecord) -> dict[int, Shortcuts]:
    """Per L, what the trivial rules score on the instances every model fitted."""
    task = record.task
    return {
        length: task.shortcuts(
            [i for i in record.instances if task.id_of(i) in record.common.get(length, frozenset())]
        )
        for length in record.plan.prefix_lengths
    }


def _shortcuts(record: CampaignRecord, found: dict[int, Shortcuts]) -> list[str]:
    task = record.task
    rules = next(iter(found.values())).rules
    chance = ", ".join(f"{s.chance:.3f} at L = {length:,}" for length, s in found.items())
    lines = [
        "## Shortcut check",
        "",
        f"What a rule that reads only the candidates' surface scores on the {task.unit} compared "
        f"(chance {chance}):",
        "",
    ]
    lines += [f"| L | {task.unit} | " + " | ".join(rules) + " |", "| ---: | ---: |" + " ---: |" * len(rules)]
    for length, s in found.items():
        cells = " | ".join(f"{accuracy:.3f}" for accuracy in s.accuracy)
        lines.append(f"| {length:,} | {s.instances:,} | {cells} |")
    return [*lines, ""]


def _payload(
    record: CampaignRecord, answers: Sequence[LengthAnswer], shortcuts: dict[int, Shortcuts]
) -> dict[str, Any]:
    plan = record.plan
    return finite_or_none(
        {
            "task": record.task.name,
            "models": list(record.models),
            "plan": {**asdict(plan), "distances": {str(k): list(v) for k, v in plan.distances.items()}},
            "rule": CLAIM_RULE,
            "instances": len(record.instances),
            "common": {str(length): len(ids) for length, ids in record.common.items()},
            "answers": [
                _answer_json(a, plan.control, plan.delta, shortcuts[a.length].chance) for a in answers
            ],
            "shortcuts": {
                str(length): dict(zip(s.rules, s.accuracy, strict=True)) | {"chance": s.chance}
                for length, s in shortcuts.items()
            },
        }
    )


def _answer_json(a: LengthAnswer, control: str, delta: float, chance: float) -> dict[str, Any]:
    return {
        "model": a.model,
        "prefix_length": a.length,
        "paired": a.paired,
        "books": a.books,
        "intact": a.intact,
        "used_context": a.used,
        "bound": a.bound,
        "within_delta_from": a.delta_keep,
        "calibrated": a.calibrated,
        "gate": None if a.gate_row is None else a.gate_row.as_dict(),
        "gate_reason": a.gate_reason,
        "sentence": answer_sentence(a, control, delta, chance),
        "keeps": [
            {
                "keep": r.keep,
                **asdict(r.scores),
                "claim": r.claim.kind,
                "bound": r.claim.bound,
                "p_adjusted": r.p_adjusted,
                "ci_simultaneous": None
                if r.simultaneous is None
                else [r.simultaneous.ci_low, r.simultaneous.ci_high],
            }
            for r in a.keeps
        ],
        "copy": [r.as_dict() for r in a.copy_rows],
        "copy_horizon": None if a.horizon is None else vars(a.horizon),
    }
