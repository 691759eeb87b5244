"""The HTML report's memory parts (``--memory``): the split table and each book's scores for the samples."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from longread.probes.memory.rule import CANNOT_TELL, verdict_text
from longread.probes.memory.verdicts import MemoryVerdicts
from longread.report.load import RunReport
from longread.report.memory_split import GROUPS, MemorySplit, split_cells, split_note
from longread.report.table import format_x

SCORES = (
    ("cloze", "name cloze"),
    ("cloze-rank", "ranked cloze"),
    ("extraction_exact", "extraction exact"),
    ("extraction_common_prefix", "common prefix (tokens)"),
    ("min_k", "min-k (nats)"),
)


def memory_island(verdicts: MemoryVerdicts) -> dict[str, Any]:
    """What the sample browser shows of each book: the verdict and its scores in one line."""
    return {
        "model": verdicts.model_name,
        "rule": verdicts.rule,
        "books": {
            book: {"remembered": entry.get("remembered"), "text": book_line(entry, verdicts.rule)}
            for book, entry in verdicts.books.items()
        },
    }


def book_line(entry: Mapping[str, Any], rule: str) -> str:
    """``remembered: no (rule …) — name cloze 0.00 [0.00, 0.11] (n=30); …``."""
    verdict = entry.get("remembered")
    said = verdict_text(CANNOT_TELL if verdict is None else verdict)  # null (older files): cannot tell
    scores = entry.get("scores") or {}
    parts = []
    for key, name in SCORES:
        score = scores.get(key)
        if isinstance(score, Mapping) and score.get("value") is not None:
            unsure = " — cannot tell" if score.get("verdict") == CANNOT_TELL else ""
            parts.append(
                f"{name} {score['value']:.3g} [{score['ci_low']:.3g}, {score['ci_high']:.3g}] "
                f"(n={score['n']}){unsure}"
            )
    notes = entry.get("notes") or []
    tail = f"; notes: {' / '.join(map(str, notes))}" if notes else ""
    return f"remembered: {said} (rule {rule}) — " + ("; ".join(parts) or "no score") + tail


def memory_split_html(
    splits: Sequence[MemorySplit], verdicts: MemoryVerdicts, runs: Sequence[RunReport], run_ids: Sequence[str]
) -> str:
    """A section: per run × x the score on remembered / not remembered / not probed books and the
    difference, with the note of the markdown table."""
    ids = {run.label: run_id for run, run_id in zip(runs, run_ids, strict=True)}
    head = "".join(f"<th>{escape(h)}</th>" for h in ("model", "x", *GROUPS, "remembered − not [95% CI]"))
    lines = [
        "<h2>Split by memory</h2>",
        f"<table class=results id=memory-split><thead><tr>{head}</tr></thead><tbody>",
    ]
    for split in splits:
        body = "".join(f'<td class="num">{escape(cell)}</td>' for cell in split_cells(split))
        x = escape(format_x(split.x, runs[0].x_axis.scale))
        lines.append(
            f'<tr data-run="{ids.get(split.run, "")}" data-x="{escape(str(split.x))}">'
            f"<td>{escape(split.run)}</td><td class=num>{x}</td>{body}</tr>"
        )
    note = split_note(splits, verdicts) if splits else ""
    lines += ["</tbody></table>", f"<p class=note>{escape(note)}</p>"]
    return "\n".join(lines)
