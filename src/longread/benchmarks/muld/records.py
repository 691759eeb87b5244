"""The published MuLD layout: read it line by line, keep going past bad lines, write it byte-stably.

One JSON object per line: ``input`` (string, required, not empty), ``output``
(a list of reference strings, or one string — read as a one-element list; an
empty list is an error), ``metadata`` (a string; missing is read as ``None``,
as the authors' loader reads it as ``""``). Files may be plain or ``.bz2``
(decided by the suffix). A bad line (not UTF-8, not JSON, a field missing or of
the wrong type) is a :class:`RecordProblem` naming the file and line; the other
lines are still read, and the caller reports the problems.

Writing: keys in the order ``input, output, metadata``, UTF-8 without escaping
(``ensure_ascii=False``), ``\\n`` line ends, ``.bz2`` at level 9 (bz2 writes no
timestamp, so the same records give the same bytes), through an atomic rename.
"""

from __future__ import annotations

import bz2
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longread.errors import BadInputError
from longread.files import file_mode


@dataclass(frozen=True)
class MuldRecord:
    input: str
    output: tuple[str, ...]
    metadata: str | None = None

    def as_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {"input": self.input, "output": list(self.output)}
        if self.metadata is not None:
            row["metadata"] = self.metadata
        return row

    def metadata_json(self) -> dict[str, Any]:
        """``metadata`` parsed as a JSON object (what longread's builders write); ``{}`` otherwise."""
        if not self.metadata:
            return {}
        try:
            value = json.loads(self.metadata)
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class RecordProblem:
    path: str
    line: int
    problem: str
    hint: str

    def __str__(self) -> str:
        return f"{self.path}, line {self.line}: {self.problem} — {self.hint}"

    def as_error(self) -> BadInputError:
        return BadInputError(self.path, self.problem, self.hint, line=self.line)


@dataclass
class RecordFile:
    path: Path
    records: list[tuple[int, MuldRecord]] = field(default_factory=list)
    """(line number from 1, record) for every good line."""
    problems: list[RecordProblem] = field(default_factory=list)


def _open_binary(path: Path) -> Any:
    try:
        if path.name.endswith(".bz2"):
            return bz2.open(path, "rb")
        return path.open("rb")
    except FileNotFoundError:
        raise BadInputError(path, "file not found", "check the path to the MuLD .jsonl(.bz2) file") from None
    except IsADirectoryError:
        raise BadInputError(path, "is a directory", "pass a MuLD .jsonl or .jsonl.bz2 file") from None


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with _open_binary(path) as handle:
        try:
            yield from enumerate(handle, start=1)
        except (OSError, EOFError) as exc:
            raise BadInputError(
                path, f"cannot decompress ({exc})", "the .bz2 file is corrupt or cut short; download it again"
            ) from None


def parse_record(raw: bytes | str, path: str, line: int) -> MuldRecord | RecordProblem:
    """One line → a record, or the problem with it (named by file and line)."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8-sig" if line == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            return RecordProblem(
                path,
                line,
                f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})",
                "MuLD files are UTF-8: re-encode the file (e.g. iconv -f latin1 -t utf-8)",
            )
    else:
        text = raw
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return RecordProblem(
            path, line, f"not valid JSON ({exc.msg} at column {exc.colno})", "fix or drop this line"
        )
    if not isinstance(value, dict):
        return RecordProblem(
            path, line, f"a JSON {type(value).__name__}, not an object", "each line is one object"
        )
    document = value.get("input")
    if document is None:
        return RecordProblem(path, line, "no 'input' field", "each line needs 'input' (the document text)")
    if not isinstance(document, str) or not document.strip():
        return RecordProblem(path, line, "'input' is empty or not a string", "give the document text")
    output = value.get("output")
    if output is None:
        return RecordProblem(path, line, "no 'output' field", "each line needs 'output' (the references)")
    references = [output] if isinstance(output, str) else output
    if not isinstance(references, list) or not all(isinstance(item, str) for item in references):
        return RecordProblem(
            path, line, "'output' is not a string or a list of strings", "fix the references"
        )
    if not references or not any(item.strip() for item in references):
        return RecordProblem(path, line, "empty reference list", "give at least one non-empty reference")
    metadata = value.get("metadata")
    if metadata is not None and not isinstance(metadata, str):
        metadata = json.dumps(metadata, ensure_ascii=False, sort_keys=True)
    return MuldRecord(document, tuple(references), metadata)


def read_records(path: str | Path) -> RecordFile:
    """Every good record of a MuLD file, and a problem for each bad line (the reading goes on)."""
    path = Path(path)
    out = RecordFile(path)
    blank = 0
    for number, raw in _lines(path):
        if not raw.strip():
            blank += 1
            continue
        parsed = parse_record(raw, str(path), number)
        if isinstance(parsed, RecordProblem):
            out.problems.append(parsed)
        else:
            out.records.append((number, parsed))
    if not out.records and not out.problems:
        raise BadInputError(path, "holds no records", "is this the right file? (it is empty)")
    return out


def iter_records(path: str | Path) -> Iterator[tuple[int, MuldRecord]]:
    """(line, record) of a MuLD file one at a time (a NarrativeQA split holds a story per question: too
    much to hold whole); a bad line is an error naming the file and line."""
    path = Path(path)
    for number, raw in _lines(path):
        if not raw.strip():
            continue
        parsed = parse_record(raw, str(path), number)
        if isinstance(parsed, RecordProblem):
            raise BadInputError(path, f"line {number}: {parsed.problem}", parsed.hint)
        yield number, parsed


def dumps_record(record: MuldRecord) -> str:
    return json.dumps(record.as_json(), ensure_ascii=False) + "\n"


def write_records(path: str | Path, records: Iterable[MuldRecord]) -> int:
    """Write ``records`` atomically, one at a time (a whole NarrativeQA split never sits in memory);
    ``.bz2`` compresses (the stream gives the same bytes as one-shot ``bz2.compress`` at level 9).
    Returns how many were written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    count = 0
    try:
        with os.fdopen(handle, "wb") as raw:
            out: Any = bz2.BZ2File(raw, "wb", compresslevel=9) if path.name.endswith(".bz2") else raw
            for record in records:
                out.write(dumps_record(record).encode("utf-8"))
                count += 1
            if out is not raw:
                out.close()
            raw.flush()
            os.fsync(raw.fileno())
        os.chmod(temporary, file_mode())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return count
