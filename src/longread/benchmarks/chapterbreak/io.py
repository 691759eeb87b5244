"""Read and write ChapterBreak JSONL files (our schema), with errors that name file and line."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from longread.benchmarks.chapterbreak.schema import SCHEMA_VERSION, ChapterBreakInstance
from longread.errors import BadInputError
from longread.files import atomic_writer, read_text


def iter_instances(path: str | Path) -> Iterator[ChapterBreakInstance]:
    """Instances of a longread ChapterBreak JSONL file; a bad line is an error naming its number."""
    text = read_text(path, max_line_chars=None)
    # split on "\n" only: str.splitlines would also split inside strings at U+0085, U+2028 …
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadInputError(
                path, f"not valid JSON ({exc.msg}, column {exc.colno})", line=number
            ) from None
        if isinstance(data, dict) and ("pg19" in data or "ao3" in data):
            raise BadInputError(
                path,
                "this is the official ChapterBreak layout, not longread's JSONL",
                "convert it first: longread convert chapterbreak FILE --to longread --out NEW.jsonl",
                line=number,
            )
        if isinstance(data, dict) and data.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
            raise BadInputError(
                path,
                f"schema_version {data.get('schema_version')} is not {SCHEMA_VERSION}",
                "rebuild the file with this version of longread",
                line=number,
            )
        try:
            yield ChapterBreakInstance.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '<row>'}: {err['msg']}" for err in exc.errors()[:5]
            )
            raise BadInputError(
                path,
                f"not a ChapterBreak instance ({problems})",
                "is this a longread ChapterBreak file? build one with `longread build chapterbreak`",
                line=number,
            ) from None


def load_instances(path: str | Path) -> list[ChapterBreakInstance]:
    return list(iter_instances(path))


def write_instances(instances: Iterable[ChapterBreakInstance], path: str | Path) -> int:
    count = 0
    with atomic_writer(path) as fh:
        for instance in instances:
            fh.write(instance.model_dump_json() + "\n")
            count += 1
    return count
