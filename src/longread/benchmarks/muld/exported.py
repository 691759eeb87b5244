"""MuLD records inside an ``hf`` export folder: written as read, read back as the same instances.

An export's ``prefix_N`` config holds prompts already fitted to one model's window; beside it the
config ``longread_instances`` holds every record as longread read it — the published MuLD record
(``input``, ``output``, ``metadata``) with the name of the file and the line it came from, which an
instance's id falls back on when its metadata names none. ``longread eval muld/TASK --data DIR``
then scores exactly the instances it scores from the original file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from longread.benchmarks.muld.records import MuldRecord, RecordProblem, parse_record
from longread.errors import BadInputError
from longread.evaluation.exported import parquet_path, read_manifest, read_parquet_rows

INSTANCES_CONFIG = "longread_instances"
INSTANCES_PATH = parquet_path(INSTANCES_CONFIG)


def record_row(instance_id: str, source: str, line: int, record: MuldRecord) -> dict[str, Any]:
    """One row of the instances config (the file's name only: the same data give the same bytes)."""
    return {
        "id": instance_id,
        "source": Path(source).name,
        "line": line,
        "record": json.dumps(record.as_json(), ensure_ascii=False, sort_keys=True),
    }


def load_exported_records(folder: Path, task: str) -> list[tuple[Path, int, MuldRecord | RecordProblem]]:
    """(the original file's name as a path, its line, the record) per row, in export order."""
    read_manifest(folder, task)
    where = folder / INSTANCES_PATH
    out: list[tuple[Path, int, MuldRecord | RecordProblem]] = []
    for number, row in enumerate(read_parquet_rows(folder, INSTANCES_CONFIG), start=1):
        try:
            source, line, raw = str(row["source"]), int(row["line"]), str(row["record"])
        except (KeyError, TypeError, ValueError):
            raise BadInputError(
                where, f"row {number} lacks source, line or record", "export the data again"
            ) from None
        parsed = parse_record(raw, f"{where} (row {number}, from {source})", line)
        out.append((Path(source), line, parsed))
    return out
