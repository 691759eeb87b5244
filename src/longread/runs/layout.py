"""The files of a run directory, by name, and reading its sample rows back (open or not)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from longread.runs.jsonl_log import read_rows

CONFIG_FILE = "config.json"
SAMPLES_FILE = "samples.jsonl"
ERRORS_FILE = "errors.jsonl"
RESULTS_FILE = "results.json"
TIMING_FILE = "timing.json"
SELECTION_FILE = "selection.json"
"""The sample keys the last session summarised (samples.jsonl may hold more, from a larger --sample)."""
INCIDENTS_FILE = "incidents.jsonl"
"""What happened to the machinery while samples were answered (a Ray worker died and its requests were
asked again): written only when something happened, never part of the results."""
RUN_FILES = (
    CONFIG_FILE,
    SAMPLES_FILE,
    ERRORS_FILE,
    RESULTS_FILE,
    TIMING_FILE,
    SELECTION_FILE,
    INCIDENTS_FILE,
)


def read_samples(run_dir: Path) -> list[dict[str, Any]]:
    """The sample rows of a run directory (open or not): one per key, the last written wins."""
    by_key: dict[str, dict[str, Any]] = {}
    for row in read_rows(run_dir / SAMPLES_FILE)[0]:
        by_key[str(row.get("key"))] = row
    return list(by_key.values())
