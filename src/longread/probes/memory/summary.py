"""``summary.md`` of a memory probe: each book's scores, its verdict clause by clause, the notes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from longread.probes.memory.book import BookMemory
from longread.probes.memory.rule import CANNOT_TELL, Clause, verdict_text


def summary_markdown(summaries: Sequence[BookMemory], settings: Any, model: dict[str, Any]) -> str:
    """The page of ``write_memory`` (``settings``: its :class:`~.run.MemoryProbeSettings`)."""
    name = model.get("spec") or model.get("name") or "the model"
    lines = [
        f"# Reading or remembering? — {name}",
        "",
        f"remembered when {settings.rule.replace(',', ' or ')} (no: every clause measured is ruled out by "
        "its interval; otherwise cannot tell); 95% intervals (Wilson for shares, bootstrap "
        f"for means); seed {settings.seed}, {settings.passages} passages/places a book, extraction "
        f"{settings.prompt_tokens} → {settings.new_tokens} tokens, min-k {settings.min_k_percent:g}%.",
        "",
        "| book | title | cloze | ranked cloze (baselines) | extraction exact | common prefix (tokens) "
        "| min-k (nats) | remembered |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for summary in summaries:
        cells = [
            _cell(summary.scores.get(key))
            for key in ("cloze", "cloze-rank", "extraction_exact", "extraction_common_prefix", "min_k")
        ]
        verdict = verdict_text(summary.remembered)
        lines.append(f"| {summary.book} | {summary.title} | " + " | ".join(cells) + f" | {verdict} |")
    lines += ["", "Verdicts, clause by clause:", ""]
    lines += [
        f"- {summary.book}: {verdict_text(summary.remembered)} — "
        + "; ".join(Clause(**clause).text() for clause in summary.clauses)
        for summary in summaries
    ]
    notes = [f"- {summary.book}: {note}" for summary in summaries for note in summary.notes]
    if notes:
        lines += ["", "Notes:", "", *notes]
    lines += [
        "",
        "Membership scores such as min-k are weak evidence on Gutenberg books on their own; cloze and "
        "extraction are the primary scores.",
        "",
        "![memory scores per book](memory.png)",
        "",
    ]
    return "\n".join(lines)


def _cell(score: dict[str, Any] | None) -> str:
    if not score or score.get("value") is None:
        return "—"
    text = f"{score['value']:.3g} [{score['ci_low']:.3g}, {score['ci_high']:.3g}] (n={score['n']})"
    if score.get("chance") is not None:
        text += f" (chance {score['chance']:.2g}"
        if score.get("most_frequent") is not None:
            text += f"; always the most frequent name {score['most_frequent']:.2g}"
            if score.get("most_frequent_p") is not None:
                low, high = score["over_most_frequent_ci"]
                text += (
                    f"; the model less it {score['over_most_frequent']:+.2g} [{low:+.2g}, {high:+.2g}], "
                    f"the model alone right on {score['model_only_right']}, the name alone on "
                    f"{score['most_frequent_only_right']}, McNemar p {score['most_frequent_p']:.2g}"
                )
        text += ")"
    if "cloze_copied_example" in score:
        text += f"; {score['cloze_copied_example']} copied an example, {score['cloze_not_a_name']} no name"
    if score.get("verdict") == CANNOT_TELL:
        text = f"cannot tell: {text}"
    return text
