"""Per-sample rows of a run read back as the task's typed row model (the one definition of the layout)."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from longread.errors import LongreadError
from longread.evaluation.task import SampleRow
from longread.runs.layout import SAMPLES_FILE, read_samples

RowT = TypeVar("RowT", bound=SampleRow)


class RowFormatError(LongreadError):
    """A stored row does not match the task's row layout."""


def read_typed_rows(run_dir: Path, row_model: type[RowT]) -> list[RowT]:
    """The rows of ``run_dir/samples.jsonl`` (one per key, the last written wins) as ``row_model``."""
    rows: list[RowT] = []
    for raw in read_samples(run_dir):
        try:
            rows.append(row_model.model_validate(raw))
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(part) for part in problem["loc"])
            raise RowFormatError(
                f"{run_dir / SAMPLES_FILE}: row {raw.get('key', '?')!r} is not a {row_model.__name__} "
                f"({where}: {problem['msg']}) — was it written by another task or a newer longread?"
            ) from None
    return rows
