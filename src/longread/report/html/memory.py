"""The HTML report's memory parts (``--memory``): the split table and each book's scores for the samples."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from longread.probes.memory.verdicts import MemoryVerdicts
from longread.report.load import RunReport
from longread.report.memory_split import GROUPS, MemorySplit, split_table

SCORES = (
    ("cloze", "name cloze"),
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
    said = "not decided" if verdict is None else ("yes" if verdict else "no")
    scores = entry.get("scores") or {}
    parts = []
    for key, name in SCORES:
        score = scores.get(key)
        if isinstance(score, Mapping) and score.get("value") is not None:
            parts.append(
                f"{name} {score['value']:.3g} [{score['ci_low']:.3g}, {score['ci_high']:.3g}] "
                f"(n={score['n']})"
            )
    notes = entry.get("notes") or []
    tail = f"; notes: {' / '.join(map(str, notes))}" if notes else ""
    return f"remembered: {said} (rule {rule}) — " + ("; ".join(parts) or "no score") + tail


def memory_split_html(
    splits: Sequence[MemorySplit], verdicts: MemoryVerdicts, runs: Sequence[RunReport], run_ids: Sequence[str]
) -> str:
    """A section: per run × x the score on remembered / not remembered / not probed books and the
    difference, with the markdown table's note."""
    ids = {run.label: run_id for run, run_id in zip(runs, run_ids, strict=True)}
    head = "".join(f"<th>{escape(h)}</th>" for h in ("model", "x", *GROUPS, "remembered − not [95% CI]"))
    lines = [
        "<h2>Split by memory</h2>",
        f"<table class=results id=memory-split><thead><tr>{head}</tr></thead><tbody>",
    ]
    markdown = split_table(splits, verdicts, runs[0].x_axis.scale if runs else "linear")
    for split, line in zip(splits, _table_lines(markdown), strict=True):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        body = "".join(f'<td class="num">{escape(cell)}</td>' for cell in cells[1:])
        run_id = ids.get(split.run, "")
        lines.append(
            f'<tr data-run="{run_id}" data-x="{escape(str(split.x))}"><td>{escape(split.run)}</td>{body}</tr>'
        )
    note = markdown.split("\n\n", 1)[1] if "\n\n" in markdown else ""
    lines += ["</tbody></table>", f"<p class=note>{escape(note)}</p>"]
    return "\n".join(lines)


def _table_lines(markdown: str) -> list[str]:
    """The data rows of the markdown table (after the header and the rule)."""
    table = markdown.split("\n\n", 1)[0].splitlines()
    return table[2:]
