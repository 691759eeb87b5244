"""Folders ``longread export --to hf`` writes, as a task's loader meets them: the manifest and parquet.

Every export folder holds ``longread_export.json`` (the task, the tokenizer, the data it was made
from …). A task whose loader accepts such a folder (``longread eval chapterbreak --data DIR``) reads
the manifest here to check the folder is an export of that task, then its parquet rows. The writing
lives in ``longread.export``, above the benchmarks; only the names both sides share live here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from longread.errors import BadInputError, LongreadError

MANIFEST = "longread_export.json"
SPLIT = "test"


def parquet_path(config: str) -> str:
    """A config's one parquet file, relative to the export folder."""
    return f"{config}/{SPLIT}-00000-of-00001.parquet"


def is_export(folder: Path) -> bool:
    return folder.is_dir() and (folder / MANIFEST).is_file()


def read_manifest(folder: Path, task: str) -> dict[str, Any]:
    """The export's manifest; an export of another task (or another target) is a clear error."""
    path = folder / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise BadInputError(path, f"cannot read the export manifest ({exc})", "export it again") from None
    if not isinstance(manifest, dict):
        raise BadInputError(path, "is not a longread export manifest", "export the data again")
    if manifest.get("task") != task:
        raise BadInputError(
            folder,
            f"is a longread export of {manifest.get('task')!r}, not of {task!r}",
            f"evaluate it as `longread eval {manifest.get('task')}`, or give {task} data",
        )
    if manifest.get("target") != "hf":
        raise BadInputError(
            folder,
            f"is a {manifest.get('target')!r} export, which longread cannot read back",
            f"give the data it was made from, or a `longread export {task} --to hf` folder",
        )
    return manifest


def read_parquet_rows(folder: Path, config: str) -> list[dict[str, Any]]:
    path = folder / parquet_path(config)
    if not path.is_file():
        raise BadInputError(
            path, f"the export has no config {config}", "export it again with this version of longread"
        )
    try:
        import pyarrow.parquet
    except ImportError as exc:
        raise LongreadError(
            "reading an hf export needs pyarrow, which is not installed — run `make install`"
        ) from exc
    rows: list[dict[str, Any]] = pyarrow.parquet.read_table(path).to_pylist()
    return rows
