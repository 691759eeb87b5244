"""lm-evaluation-harness's task manager for an exported folder.

The exported task files are self-contained (they include no task of lm-eval's own), so the manager
indexes only the folder: indexing lm-eval's thousands of bundled task files takes ~5 s per manager here,
and it would find nothing these tests use. A user's ``lm_eval --include_path FOLDER`` indexes both and
finds the same tasks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def task_manager(folder: Path) -> Any:
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=str(folder), include_defaults=False)
