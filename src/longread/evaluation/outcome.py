"""What one run did: the counts, errors, incidents and checks :func:`~longread.evaluation.runner.run_task`
returns (and the waves in :mod:`.waves` fill in as they go)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longread.evaluation.recheck import RecheckReport
from longread.evaluation.selection import FixedSelection
from longread.evaluation.task import SampleRow


@dataclass
class RunOutcome:
    run_dir: Path
    results: dict[str, Any]
    request_kind: str
    scored: int = 0
    reused: int = 0
    skipped_done: int = 0
    instances: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)
    input_problems: list[str] = field(default_factory=list)
    """Items of the data that could not be read (bad lines), each naming its file and line."""
    incidents: list[str] = field(default_factory=list)
    """What happened to the backend's machinery while samples were answered (a Ray replica died and its
    requests were asked again), as the backend told it; also in the run's ``incidents.jsonl``."""
    recheck: RecheckReport | None = None
    """On resume: what re-scoring finished samples found (also in ``config.json``'s ``sessions``)."""
    selection: FixedSelection | None = None
    """A fixed selection (``books_list``, ``same_samples_as``): what it asked for and what the data lacked."""


OnRow = Callable[[SampleRow], None]
"""Called with each row as it is stored (the HTML report's live view, tests)."""
