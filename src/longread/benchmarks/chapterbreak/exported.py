"""ChapterBreak instances inside an ``hf`` export folder: written whole, read back whole.

The export's ``prefix_N`` configs hold items already cut for harnesses; beside them the config
``longread_instances`` holds every instance as longread built it (one JSON record per row), so
``longread eval chapterbreak --data DIR`` scores exactly what it scores from the JSONL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance
from longread.errors import BadInputError
from longread.evaluation.exported import parquet_path, read_manifest, read_parquet_rows

TASK = "chapterbreak"
INSTANCES_CONFIG = "longread_instances"
INSTANCES_PATH = parquet_path(INSTANCES_CONFIG)


def instance_record(instance: ChapterBreakInstance) -> dict[str, Any]:
    """One row of the instances config: the id to browse by, the whole instance as JSON."""
    return {"id": instance.id, "instance": instance.model_dump_json()}


def load_exported(folder: Path) -> list[ChapterBreakInstance]:
    """The instances of a ``longread export chapterbreak --to hf`` folder, in the order they were built."""
    read_manifest(folder, TASK)
    instances = []
    for number, row in enumerate(read_parquet_rows(folder, INSTANCES_CONFIG), start=1):
        try:
            instances.append(ChapterBreakInstance.model_validate_json(row["instance"]))
        except (KeyError, TypeError, ValidationError) as exc:
            raise BadInputError(
                folder / INSTANCES_PATH,
                f"row {number} is not a ChapterBreak instance ({type(exc).__name__})",
                "export the data again",
            ) from None
    return instances
