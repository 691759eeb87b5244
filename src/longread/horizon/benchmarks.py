"""The benchmarks a horizon campaign runs on, by the name ``longread eval`` gives them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from longread.horizon.tasks import HorizonError, HorizonTask

TASKS = ("chapterbreak", "narrativexl")


def horizon_task(name: str, settings: Mapping[str, Any]) -> HorizonTask:
    """The adapter of task ``name`` with the task settings ``settings`` (``-o`` values)."""
    if name == "chapterbreak":
        from longread.horizon.task_chapterbreak import ChapterBreakHorizon

        return ChapterBreakHorizon(dict(settings))
    if name == "narrativexl":
        from longread.horizon.task_narrativexl import NarrativeXLHorizon

        return NarrativeXLHorizon(dict(settings))
    raise HorizonError(
        f"horizon runs on {' or '.join(TASKS)} (not {name}): a copy of the answer is planted there, and "
        "each sample's distance to what it needs is known"
    )
