"""The PG-19 layout: ``train/ validation/ test/`` folders of ``<id>.txt`` books and a ``metadata.csv``.

PG-19 texts are already stripped of the Gutenberg header and footer; chapters are
found by ``chapters.detect_chapters``. The metadata rows are
``id, short_book_title, publication_date, url`` (with or without a header row).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from pathlib import Path

from longread.documents.book import Book
from longread.documents.chapters import detect_chapters, spans_to_chapters
from longread.errors import BadInputError
from longread.files import read_text

SPLITS = ("train", "validation", "test")
METADATA_FILE = "metadata.csv"


def read_metadata(path: Path) -> dict[str, tuple[str, str]]:
    """Book id → (title, publication date) from a PG-19 metadata.csv."""
    rows: dict[str, tuple[str, str]] = {}
    text = read_text(path)
    for line_no, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or (line_no == 1 and row[0].strip().lower() == "id"):
            continue
        if len(row) < 3:
            raise BadInputError(
                path,
                f"expected id, short_book_title, publication_date, url; got {len(row)} fields",
                "check the file is PG-19's metadata.csv",
                line=line_no,
            )
        rows[row[0].strip()] = (row[1].strip(), row[2].strip())
    return rows


def _sort_key(path: Path) -> tuple[int, int, str]:
    # Numeric ids in numeric order (PG-19 ids are Gutenberg numbers), anything else after them.
    return (0, int(path.stem), "") if path.stem.isdigit() else (1, 0, path.stem)


def _book(path: Path, split: str, metadata: dict[str, tuple[str, str]]) -> Book:
    text = read_text(path)
    spans = detect_chapters(text, source=str(path))
    notes: list[str] = []
    entry = metadata.get(path.stem)
    if entry is None:
        notes.append(f"book {path.stem} is not in {METADATA_FILE}; title unknown")
        title, date = path.stem, ""
    else:
        title, date = entry
    front = text[: spans[0].heading_start].strip()
    if front:
        notes.append(f"dropped {len(front):,} characters before the first chapter (front matter)")
    return Book(
        id=path.stem,
        title=title,
        author="Unknown",
        language="en",
        source=str(path),
        chapters=spans_to_chapters(text, spans),
        metadata={"split": split, "publication_date": date},
        notes=tuple(notes),
    )


def iter_pg19(folder: str | Path, *, splits: Iterable[str] | None = None) -> Iterator[Book | BadInputError]:
    """Every book of a PG-19 folder in (split, id) order; a book that cannot be read is yielded as its error.

    Yielding errors instead of raising lets a builder skip one bad book and report it
    without losing the rest of a 28,000-book run.
    """
    folder = Path(folder)
    metadata_path = folder / METADATA_FILE
    if not metadata_path.is_file():
        raise BadInputError(
            folder, f"no {METADATA_FILE} here", "give the PG-19 root folder (with train/ validation/ test/)"
        )
    wanted = sorted(SPLITS if splits is None else splits)
    unknown = [s for s in wanted if s not in SPLITS]
    if unknown:
        raise BadInputError(
            folder, f"unknown split(s) {', '.join(unknown)}", f"choose from {', '.join(SPLITS)}"
        )
    present = [s for s in wanted if (folder / s).is_dir()]
    if not present:
        raise BadInputError(
            folder, f"none of the split folders {', '.join(wanted)} exist", "check the PG-19 folder"
        )
    metadata = read_metadata(metadata_path)
    for split in present:
        for path in sorted((folder / split).glob("*.txt"), key=_sort_key):
            try:
                yield _book(path, split, metadata)
            except BadInputError as exc:
                yield exc


def read_pg19_file(path: str | Path) -> Book:
    """One PG-19 ``<id>.txt`` whose split folder sits beside ``metadata.csv`` (its grandparent folder)."""
    path = Path(path)
    metadata_path = path.parent.parent / METADATA_FILE
    if not metadata_path.is_file():
        raise BadInputError(
            path,
            f"no {METADATA_FILE} in {path.parent.parent}",
            "a PG-19 book lives in <root>/<split>/<id>.txt",
        )
    return _book(path, path.parent.name, read_metadata(metadata_path))
