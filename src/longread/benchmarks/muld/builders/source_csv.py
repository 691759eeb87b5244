"""CSV sources of the MuLD builders (NarrativeQA's ``documents.csv``/``qaps.csv``, archetype labels).

Rules: UTF-8 (BOM allowed), a header row that must hold every required column
(a missing column is a :class:`BadInputError` on line 1 naming the columns
found); each later row is read with the line it starts on (quoted fields may
span lines). A row with a different number of fields than the header is a
:class:`CsvRowProblem` — the caller drops it with its line and goes on. A
row the ``csv`` module cannot parse at all stops the reading with a
:class:`BadInputError` naming the line. Blank lines are skipped.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from longread.errors import BadInputError
from longread.files import read_text


@dataclass(frozen=True)
class CsvRow:
    line: int
    values: dict[str, str]


@dataclass(frozen=True)
class CsvRowProblem:
    line: int
    problem: str


def read_csv_rows(path: str | Path, required: Sequence[str]) -> Iterator[CsvRow | CsvRowProblem]:
    """Every data row of ``path`` as a :class:`CsvRow`, or the problem with it."""
    text = read_text(path, max_line_chars=None)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise BadInputError(path, "no header row", "the file is empty", line=1) from None
    header = [name.strip() for name in header]
    missing = [name for name in required if name not in header]
    if missing:
        raise BadInputError(
            path,
            f"missing column(s) {', '.join(missing)} (found: {', '.join(header)})",
            f"the header must name {', '.join(required)}",
            line=1,
        )
    start = reader.line_num + 1
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise BadInputError(
                path, f"cannot parse the CSV ({exc})", "fix the quoting", line=start
            ) from None
        line, start = start, reader.line_num + 1
        if not fields or all(not field.strip() for field in fields):
            continue
        if len(fields) != len(header):
            yield CsvRowProblem(line, f"{len(fields)} fields where the header has {len(header)}")
            continue
        yield CsvRow(line, dict(zip(header, fields, strict=True)))
