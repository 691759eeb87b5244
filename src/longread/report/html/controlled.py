"""A controlled run's contexts as the model read them, for the sample browser.

A run under ``--context shuffle|replace|none`` read a context that exists nowhere else: its distant part
shuffled, replaced by another book's tokens, or dropped. ``--save-inputs`` keeps the exact token ids each
request sent (``inputs.jsonl.gz``); the run's tokenizer decodes them here. The context read is
``[distant part][the last K tokens, kept][the question, when the task asks one after the document]``:
the first ``tokens_perturbed`` tokens are the perturbed part (``shuffle``, ``replace``); under ``none``
they were dropped and the context starts at the kept tail. Long parts are shown by their end (the
distant part) or in full up to a cap (the kept tail and question), and the view says what it left out.
Without saved inputs, or without the tokenizer, the page says so and how to get the view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from longread.report.html.cut import TokenizerUnavailable, cut_finder
from longread.runs.inputs_log import INPUTS_FILE, read_inputs

DISTANT_CHARS = 4_000
"""Of the perturbed part, its last characters are shown (the part next to the kept tail)."""
KEPT_CHARS = 20_000
"""Of the kept tail and the question, the last characters are shown."""


def controlled_contexts(
    run_dir: Path, model: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, dict[str, Any]], str]:
    """(sample key → the view of its context, a note for the page; empty for a run under no control)."""
    controlled = [row for row in rows if row.get("context_control") not in (None, "intact")]
    if not controlled:
        return {}, ""
    path = run_dir / INPUTS_FILE
    if not path.is_file():
        return {}, (
            "a controlled run: its contexts are not shown because the run kept no token ids — "
            "rerun it with `longread eval … --save-inputs --resume` to see each context as the model read it"
        )
    try:
        finder = cut_finder(model)
    except TokenizerUnavailable as exc:
        return {}, f"a controlled run: its saved token ids cannot be decoded here ({exc})"
    lines = {str(line.get("key")): line for line in read_inputs(path)}
    views: dict[str, dict[str, Any]] = {}
    missing = 0
    for row in controlled:
        line = lines.get(str(row.get("key")))
        if line is None:
            missing += 1
            continue
        views[str(row["key"])] = _view(row, line, finder.decode)
    note = (
        f"each context decoded from {INPUTS_FILE} with tokenizer {finder.description}: the perturbed part "
        "(its end) and the last K tokens kept as they were"
    )
    if missing:
        note += f"; {missing} rows have no saved ids (finished before --save-inputs was given)"
    return views, note


def _view(row: Mapping[str, Any], line: Mapping[str, Any], decode: Any) -> dict[str, Any]:
    kind = str(row.get("context_control"))
    perturbed = int(row.get("tokens_perturbed") or 0)
    base = {
        "control": kind,
        "keep_last": row.get("keep_last"),
        "tokens_perturbed": perturbed,
        "donors": list(row.get("donors") or []),
    }
    parts = line.get("parts")
    if parts is not None:
        texts = [decode(_ids(part)) for part in parts if _ids(part) is not None]
        return {**base, "parts": [_tail(text, KEPT_CHARS) for text in texts], "distant": None, "kept": None}
    ids = _ids(line)
    if ids is None:
        return {**base, "unavailable": str(line.get("unavailable") or "no token ids saved")}
    split = 0 if kind == "none" else min(perturbed, len(ids))
    distant, kept = decode(ids[:split]), decode(ids[split:])
    return {
        **base,
        "distant": _tail(distant, DISTANT_CHARS),
        "kept": _tail(kept, KEPT_CHARS),
        "kept_tokens": len(ids) - split,
    }


def _ids(line: Mapping[str, Any]) -> list[int] | None:
    for name in ("context", "prompt"):
        if isinstance(line.get(name), list):
            return [int(i) for i in line[name]]
    return None


def _tail(text: str, limit: int) -> dict[str, Any]:
    """The last ``limit`` characters, and how many before them are left out."""
    return {"text": text[-limit:], "omitted_chars": max(0, len(text) - limit)}
