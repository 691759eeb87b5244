"""What the per-sample browser of the HTML report shows: each run's rows and the texts behind them.

Rows come from ``samples.jsonl``, typed by the run's task where it is registered (raw JSON
otherwise). For ChapterBreak the context and the candidates are not in the rows; they are
read from the run's data file when it is still readable, and each row says how many of the
prefix's tokens the model kept (always the end of the prefix). The run's tokenizer is loaded and
the prefix tokenised again as the backend did (:mod:`longread.report.html.cut`), so each row's cut
is given to the character (``cuts``: kept tokens → offset in the prefix). Where the tokenizer
cannot be loaded here the cut is placed by the kept share of tokens applied to characters and the
note says "approximate" and why; when the data file is gone or changed the page says so instead.
NarrativeXL questions get their options and the scenes read (:mod:`longread.report.html.narrativexl`);
MuLD rows carry what the page shows (prediction, references, the kept chunks) and need no data.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longread.errors import LongreadError
from longread.report.html.cut import CutFinder, TokenizerUnavailable, cut_finder
from longread.report.load import RunReport
from longread.runs.layout import CONFIG_FILE, read_samples

MAX_CONTEXT_CHARS = 60_000
"""The tail of each prefix kept in the page: enough for every cut up to ~12K tokens, small pages."""


MULD_NOTE = (
    "the document is not shown: the prediction and the references side by side, and what the "
    "baseline kept of the document (chunk indices, character spans, tokens, scores) as the row records it"
)


@dataclass(frozen=True)
class RunSamples:
    rows: list[dict[str, Any]]
    texts: dict[str, dict[str, Any]] = field(default_factory=dict)
    """NarrativeXL: question id → the view of :func:`~longread.report.html.narrativexl.narrativexl_texts`
    (``"view": "narrativexl"``). ChapterBreak:
    instance id → {"prefix_tail", "prefix_chars", "candidates", "title", "cuts"};
    ``cuts`` maps a kept token count (as text) to the character offset in the prefix where the kept
    text starts, for each count the rows of that instance have and the tokenizer could place."""
    text_note: str = ""
    """Why the contexts are not shown, or how they were read and how exact their cut is."""
    cut: str = ""
    """``exact (tokenizer NAME)`` or ``approximate: why`` — how the page places the cut."""


def run_samples(run: RunReport) -> RunSamples:
    """The rows of one run as JSON-ready dicts, and (ChapterBreak) the instance texts they refer to."""
    rows = _typed_rows(run)
    if run.task == "narrativexl":
        from longread.report.html.narrativexl import narrativexl_texts

        texts, note = narrativexl_texts(run, rows, _run_settings(run.path), model_entry(run.path))
        return RunSamples(rows, texts, note)
    if run.task.startswith("muld/"):
        return RunSamples(rows, text_note=MULD_NOTE)
    if run.task != "chapterbreak":
        return RunSamples(rows, text_note="this task's rows carry no separate context to show")
    kept: dict[str, set[int]] = {}
    for row in rows:
        if isinstance(row.get("context_tokens_kept"), int):
            kept.setdefault(str(row.get("id")), set()).add(int(row["context_tokens_kept"]))
    texts, note = _chapterbreak_texts(run, {str(row.get("id")) for row in rows})
    prefixes = {instance_id: str(text.pop("prefix")) for instance_id, text in texts.items()}
    if not texts:
        return RunSamples(rows, texts, note)
    try:
        finder = cut_finder(model_entry(run.path))
    except TokenizerUnavailable as exc:
        cut = f"approximate: {exc}; the cut is placed by the share of tokens kept, applied to characters"
        return RunSamples(rows, texts, f"{note}; {cut}", cut)
    for instance_id, text in texts.items():
        text["cuts"] = _cuts(finder, prefixes[instance_id], kept.get(instance_id, set()))
    cut = f"exact (tokenizer {finder.description})"
    return RunSamples(
        rows, texts, f"{note}; the cut is {cut}: the prefix tokenised again as the model did", cut
    )


def _cuts(finder: CutFinder, prefix: str, kept_counts: set[int]) -> dict[str, int]:
    return {str(kept): start for kept, start in sorted(finder.kept_starts(prefix, kept_counts).items())}


def model_entry(run_dir: Path) -> dict[str, Any]:
    """``config.model`` of a run (empty when the run did not record it)."""
    return _config_entry(run_dir, "model")


def _run_settings(run_dir: Path) -> dict[str, Any]:
    """``config.settings`` of a run (the task's settings; empty when not recorded)."""
    return _config_entry(run_dir, "settings")


def _config_entry(run_dir: Path, name: str) -> dict[str, Any]:
    try:
        config = json.loads((run_dir / CONFIG_FILE).read_text(encoding="utf-8")).get("config", {})
    except (OSError, ValueError):
        return {}
    entry = config.get(name) if isinstance(config, dict) else None
    return entry if isinstance(entry, dict) else {}


def _typed_rows(run: RunReport) -> list[dict[str, Any]]:
    from longread.evaluation.registry import make_task
    from longread.evaluation.rows import read_typed_rows

    try:
        task = make_task(run.task)
    except LongreadError:
        return [dict(raw) for raw in read_samples(run.path)]
    return [row.model_dump(mode="json") for row in read_typed_rows(run.path, task.row_model)]


def _chapterbreak_texts(run: RunReport, ids: set[str]) -> tuple[dict[str, dict[str, Any]], str]:
    from longread.benchmarks.chapterbreak.io import load_instances

    if not run.data_path:
        return {}, "the run did not record its data file: contexts and candidates cannot be shown"
    path = _find_data_file(run.path, Path(run.data_path))
    if path is None:
        return {}, (
            f"the data file {run.data_path} is not readable here: contexts and candidates cannot be shown"
        )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if run.data_sha256 and digest != run.data_sha256:
        return {}, (
            f"the data file {path} has changed since the run (sha256 {digest[:12]}… ≠ "
            f"{run.data_sha256[:12]}…): contexts and candidates are not shown"
        )
    texts: dict[str, dict[str, Any]] = {}
    for instance in load_instances(path):
        if instance.id in ids:
            texts[instance.id] = {
                "title": instance.book_title,
                "prefix": instance.prefix,
                "prefix_tail": instance.prefix[-MAX_CONTEXT_CHARS:],
                "prefix_chars": len(instance.prefix),
                "candidates": instance.candidates,
            }
    note = f"contexts and candidates read from {path} (sha256 matches the run)"
    return texts, note


def _find_data_file(run_dir: Path, recorded: Path) -> Path | None:
    """The recorded data path; a relative one (relative to where the run was started) is also tried
    against the run directory's parents — the sha256 check that follows keeps a wrong guess out."""
    if recorded.is_file():
        return recorded
    if recorded.is_absolute():
        return None
    return next(
        (parent / recorded for parent in run_dir.resolve().parents if (parent / recorded).is_file()), None
    )
