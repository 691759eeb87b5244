"""A JSONL file of works whose chapters are already given, one work per line.

Each line::

    {"id": "w1", "title": "…", "author": "…", "language": "en", "metadata": {"rating": "…"},
     "chapters": [{"heading": "Chapter 1", "text": "…"}, …]}

``author``, ``language`` and ``metadata`` are optional; ``source``, ``notes`` and a
chapter's ``parts`` are optional too and written by ``write_jsonl_works`` so a
Book survives the round trip unchanged. A bad line is yielded as a
``BadInputError`` (file, line, field, what to do) and reading goes on, so one
broken work does not stop a long build.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from longread.documents.book import Book, Chapter
from longread.errors import BadInputError
from longread.files import atomic_writer, read_bytes

JSONL_SOURCE = "jsonl"
_LINE_SHAPE = (
    'each line must be {"id": str, "title": str, "chapters": [{"heading": str, "text": str}, …]} '
    "(author, language, metadata optional); fix or remove the line"
)


def _scalar_to_str(value: Any) -> Any:
    # Metadata such as {"words": 12000} is natural to write; the Book keeps every value as a string.
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    return value


class ChapterLine(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")

    heading: str
    text: str
    parts: list[str] = Field(default_factory=list)

    @field_validator("text")
    @classmethod
    def _has_text(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("the chapter text is empty")
        return text


class WorkLine(BaseModel):
    """One line of the file. Unknown top-level keys are ignored so richer exports still load."""

    model_config = ConfigDict(strict=True, extra="ignore")

    id: Annotated[str, Field(min_length=1)]
    title: str
    author: str = ""
    language: str = ""
    source: str = JSONL_SOURCE
    metadata: dict[str, Annotated[str, BeforeValidator(_scalar_to_str)]] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    chapters: Annotated[list[ChapterLine], Field(min_length=1)]

    def to_book(self) -> Book:
        return Book(
            id=self.id,
            title=self.title,
            author=self.author,
            language=self.language,
            source=self.source,
            chapters=tuple(Chapter(c.heading, c.text, tuple(c.parts)) for c in self.chapters),
            metadata=dict(self.metadata),
            notes=tuple(self.notes),
        )

    @classmethod
    def from_book(cls, book: Book) -> WorkLine:
        return cls(
            id=book.id,
            title=book.title,
            author=book.author,
            language=book.language,
            source=book.source,
            metadata=dict(book.metadata),
            notes=list(book.notes),
            chapters=[
                ChapterLine(heading=c.heading, text=c.text, parts=list(c.parts)) for c in book.chapters
            ],
        )


def iter_jsonl_works(path: str | Path) -> Iterator[Book | BadInputError]:
    """One Book per line, or a BadInputError for a line that cannot be used; blank lines are skipped.

    A file that cannot be read at all (missing, empty, binary) raises instead:
    there is no line to blame and nothing to go on with.
    """
    path = Path(path)
    data = read_bytes(path)
    _check_whole_file(data, path)
    # Split on "\n" bytes only: JSON escapes newlines inside strings, but str.splitlines would
    # also break at U+2028 and other separators that JSON leaves raw.
    for number, raw in enumerate(data.split(b"\n"), 1):
        if number == 1:
            raw = raw.removeprefix(b"\xef\xbb\xbf")
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            continue
        yield _parse_line(raw, path, number)


def _check_whole_file(data: bytes, path: Path) -> None:
    if not data.strip():
        raise BadInputError(path, "file is empty", "give a JSONL file with one work per line")
    if b"\x00" in data[:65536]:
        raise BadInputError(path, "binary file (contains NUL bytes), not JSONL", "give a JSONL text file")


def _parse_line(raw: bytes, path: Path, number: int) -> Book | BadInputError:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return BadInputError(
            path, f"not valid UTF-8 at byte {exc.start} of the line", _LINE_SHAPE, line=number
        )
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return BadInputError(
            path, f"not valid JSON ({exc.msg} at column {exc.colno})", _LINE_SHAPE, line=number
        )
    if not isinstance(value, dict):
        return BadInputError(
            path, f"a JSON {type(value).__name__} where an object was expected", _LINE_SHAPE, line=number
        )
    work_id = value.get("id") if isinstance(value.get("id"), str) and value.get("id") else None
    try:
        return WorkLine.model_validate(value).to_book()
    except ValidationError as exc:
        return BadInputError(path, _describe(exc), _LINE_SHAPE, line=number, item=work_id)


def _describe(error: ValidationError) -> str:
    """pydantic's errors as "field: problem" phrases a user can act on."""
    problems: list[str] = []
    for item in error.errors(include_url=False):
        where = _location(item["loc"])
        if item["type"] == "missing":
            problems.append(f"missing field {where!r}")
        elif item["type"] == "too_short" and where == "chapters":
            problems.append("'chapters' is empty (a work needs at least one chapter)")
        else:
            message = str(item["msg"]).removeprefix("Value error, ")
            problems.append(f"{where}: {message} (got {_preview(item.get('input'))})")
    return "; ".join(problems)


def _location(loc: tuple[int | str, ...]) -> str:
    where = ""
    for part in loc:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    return where or "line"


def _preview(value: Any) -> str:
    shown = json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= 40 else shown[:37] + "…"


def write_jsonl_works(books: Iterable[Book], path: str | Path) -> int:
    """Write the books, one per line, atomically; returns how many were written.

    A book the reader would refuse (no chapters, an empty chapter) is refused here
    too, so every file this writes reads back.
    """
    count = 0
    with atomic_writer(path) as handle:
        for book in books:
            try:
                line = WorkLine.from_book(book)
            except ValidationError as exc:
                raise BadInputError(
                    None, _describe(exc), "fix the book before writing it", item=book.id
                ) from None
            # ensure_ascii=False keeps non-English text readable; the file is UTF-8.
            handle.write(json.dumps(line.model_dump(), ensure_ascii=False) + "\n")
            count += 1
    return count
