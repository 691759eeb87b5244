"""NarrativeXL books inside an ``hf`` export folder: written whole, read back whole.

An export's ``prefix_N`` configs hold items already cut for harnesses; beside them the config
``longread_instances`` holds every book as longread read it from the build (one JSON record per
row): the read-along export keeps each ReadingBook (scenes and questions), the summaries export each
BookSummaries (scenes and summaries). ``longread eval narrativexl --data DIR`` (or
``narrativexl-summaries``) then scores exactly the instances it scores from the build directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from longread.benchmarks.narrativexl.schema import BookSummaries, ReadingBook
from longread.errors import BadInputError
from longread.evaluation.exported import parquet_path, read_manifest, read_parquet_rows

READ_ALONG_TASK = "narrativexl"
SUMMARIES_TASK = "narrativexl-summaries"
INSTANCES_CONFIG = "longread_instances"
INSTANCES_PATH = parquet_path(INSTANCES_CONFIG)

BookT = TypeVar("BookT", ReadingBook, BookSummaries)


def book_record(book: ReadingBook | BookSummaries) -> dict[str, Any]:
    """One row of the instances config: the book id to browse by, the whole book as JSON."""
    return {"id": book.book_id, "instance": book.model_dump_json()}


def _load(folder: Path, task: str, model: type[BookT]) -> list[BookT]:
    read_manifest(folder, task)
    books = []
    for number, row in enumerate(read_parquet_rows(folder, INSTANCES_CONFIG), start=1):
        try:
            books.append(model.model_validate_json(row["instance"]))
        except (KeyError, TypeError, ValidationError) as exc:
            raise BadInputError(
                folder / INSTANCES_PATH,
                f"row {number} is not a {model.__name__} ({type(exc).__name__})",
                "export the data again",
            ) from None
    return books


def load_exported_reading(folder: Path) -> list[ReadingBook]:
    """The books of a ``longread export narrativexl --to hf`` folder, in the order they were exported."""
    return _load(folder, READ_ALONG_TASK, ReadingBook)


def load_exported_summaries(folder: Path) -> list[BookSummaries]:
    """The books of a ``longread export narrativexl-summaries --to hf`` folder."""
    return _load(folder, SUMMARIES_TASK, BookSummaries)
