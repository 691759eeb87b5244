"""The frame every official NarrativeXL file shares: separators, headers, kinds, decoding, rows.

The rule: a file is "CSV with multi-symbol separators" (rows end with
:data:`LINE_SEPARATOR`, the last row too; cells are joined with
:data:`COLUMN_SEPARATOR`; the first row is the header). This module knows the
three kinds by suffix and header, decodes a file in the authors' encoding order,
splits it into checked rows, and writes text atomically with its bytes as they
are. What the cells mean is up to the layout modules
(:mod:`~longread.benchmarks.narrativexl.official.tagseparated`,
:mod:`~longread.benchmarks.narrativexl.official.questions_shortform`,
:mod:`~longread.benchmarks.narrativexl.official.hierarchical`); a cell holding several entries joins
them with :data:`SUMMARY_SEPARATOR`.

Files are decoded as the authors' loaders do (utf-8, then utf-16, cp1252, latin-1), except that an
encoding whose first row is not a known header is passed over (utf-16 "decodes" most cp1252 files into
nonsense). Line endings are kept as they are, so reading and writing again gives the same bytes. What a
file cannot hold (a scene's chapter, its offset in a book with different whitespace, the comment of an
OK row …) is listed in :func:`~longread.benchmarks.narrativexl.official.tagseparated.canonical_book`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from longread.errors import BadInputError
from longread.files import atomic_write_bytes, read_bytes

# The authors' settings.py, verbatim.
COLUMN_SEPARATOR = "###THISISOURUNIQUECOLUMNSEPARATORUNLIKELYTOBEENCOUNTEREDINANYBOOK###"
SUMMARY_SEPARATOR = "###THISISOURUNIQUESUMMARYSEPARATORUNLIKELYTOBEENCOUNTEREDINANYBOOK###"
LINE_SEPARATOR = "###THISISOURUNIQUELINESEPARATORUNLIKELYTOBEENCOUNTEREDINANYBOOK###"
OCHUNK_OVERLAP_SYMBOLS = 300

ENCODINGS = ("utf-8", "utf-16", "cp1252", "latin-1")
"""The order in which the authors' loaders try encodings."""

TAGSEPARATED_SUFFIX = ".tagseparated"
QUESTIONS_SUFFIX = ".questions_shortform"
HIERARCHICAL_SUFFIX = ".tagseparated_hierarch_sum"

TAGSEPARATED_HEADER = (
    "ChunkInd",
    "BookChunks",
    "OverlappedBookChunks",
    "Summaries",
    "FakeSummaries",
    "Failure",
    "Comment",
)
QUESTIONS_HEADER = (
    "WHEN_ASKED",
    "RAW_CHUNK",
    "OVERLAPPED_CHUNK",
    "QUESTIONS",
    "QUESTION_ANSWERS",
    "QUESTION_TYPES",
    "MEMLOADS",
)
HIERARCHICAL_HEADER = ("TRUE_SUMMARY", "FALSE_SUMMARY", "LEVEL")

OfficialKind = Literal["tagseparated", "questions_shortform", "hierarchical"]
_SUFFIXES: tuple[tuple[str, OfficialKind], ...] = (
    # longest first: ".tagseparated_hierarch_sum" also ends differently from ".tagseparated"
    (HIERARCHICAL_SUFFIX, "hierarchical"),
    (QUESTIONS_SUFFIX, "questions_shortform"),
    (TAGSEPARATED_SUFFIX, "tagseparated"),
)
_HEADERS: dict[OfficialKind, tuple[str, ...]] = {
    "tagseparated": TAGSEPARATED_HEADER,
    "questions_shortform": QUESTIONS_HEADER,
    "hierarchical": HIERARCHICAL_HEADER,
}


class OfficialFormatError(BadInputError):
    """An official NarrativeXL file that does not have the authors' layout.

    The message names the file, the book and the row (row 1 is the header row,
    the first scene is row 2), what is wrong and what to do.
    """


def _row_error(path: str | Path, book_id: str, row: int, problem: str, hint: str = "") -> OfficialFormatError:
    return OfficialFormatError(
        path,
        problem,
        hint or "the file is not as the authors' code writes it; re-download or rewrite it",
        item=f"book {book_id}, row {row}",
    )


@dataclass(frozen=True)
class OfficialText:
    """A decoded official file and the encoding that decoded it."""

    text: str
    encoding: str


# ---------------------------------------------------------------- kinds, names, decoding


def book_id_from_path(path: str | Path) -> str:
    """The book id the authors give a file: its name without the official suffix (``2960.tagseparated``)."""
    name = Path(path).name
    for suffix in (".gz", ".bz2", ".zst"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    for suffix, _ in _SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name.split(".")[0]


def _kind_from_header(text: str) -> OfficialKind | None:
    first_row = text.split(LINE_SEPARATOR, 1)[0]
    for kind, header in _HEADERS.items():
        if first_row == COLUMN_SEPARATOR.join(header):
            return kind
    return None


def decode_official(path: str | Path) -> OfficialText:
    """The file's text in the first of the authors' encodings that decodes it and shows a known header.

    When no encoding shows a known header, the first one that decodes is used
    (the authors' rule) and the header check reports the problem.
    """
    data = read_bytes(path)
    first_decoded: OfficialText | None = None
    for encoding in ENCODINGS:
        try:
            text = data.decode(encoding)
        except UnicodeError:
            continue
        if _kind_from_header(text) is not None:
            return OfficialText(text, encoding)
        if first_decoded is None:
            first_decoded = OfficialText(text, encoding)
    assert first_decoded is not None  # latin-1 decodes every byte string
    return first_decoded


def detect_official_kind(path: str | Path) -> OfficialKind:
    """Which official layout a file has: by its suffix, else by its header row."""
    name = Path(path).name
    for suffix in (".gz", ".bz2", ".zst"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    for suffix, kind in _SUFFIXES:
        if name.endswith(suffix):
            return kind
    from_header = _kind_from_header(decode_official(path).text)
    if from_header is None:
        raise OfficialFormatError(
            path,
            "not an official NarrativeXL file: no known suffix and no known header row",
            f"official files end in {TAGSEPARATED_SUFFIX}, {QUESTIONS_SUFFIX} or {HIERARCHICAL_SUFFIX} "
            "and start with the authors' column names",
        )
    return from_header


def _data_rows(path: str | Path, text: str, kind: OfficialKind, book_id: str) -> list[tuple[int, list[str]]]:
    """The rows after the header as (row number, cells), checked for the column count."""
    header = _HEADERS[kind]
    if LINE_SEPARATOR not in text:
        raise OfficialFormatError(
            path,
            "no line separator at all",
            f"official {kind} files end every row with {LINE_SEPARATOR}; is this an official file?",
            item=f"book {book_id}",
        )
    rows = text.split(LINE_SEPARATOR)
    if rows[0] != COLUMN_SEPARATOR.join(header):
        found = rows[0].split(COLUMN_SEPARATOR)
        shown = ", ".join(cell[:30] for cell in found[:8])
        raise _row_error(
            path,
            book_id,
            1,
            f"the header row is [{shown}], not the {kind} columns [{', '.join(header)}]",
            f"is this a {kind} file? the suffix says so; check the file or rename it",
        )
    result: list[tuple[int, list[str]]] = []
    for number, row in enumerate(rows[1:], start=2):
        if not row:  # the authors' loaders skip empty rows (the one after the last separator)
            continue
        cells = row.split(COLUMN_SEPARATOR)
        if len(cells) != len(header):
            raise _row_error(
                path,
                book_id,
                number,
                f"{len(cells)} columns where the {kind} layout has {len(header)} ({', '.join(header)})",
                "a separator is missing or doubled in this row; the file is damaged",
            )
        result.append((number, cells))
    return result


def _parse_int(path: str | Path, book_id: str, row: int, column: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise _row_error(path, book_id, row, f"{column} is {value[:40]!r}, not an integer") from None


def _write_official(path: str | Path, text: str, encoding: str) -> None:
    """Write the text's bytes as they are (no newline translation), atomically."""
    atomic_write_bytes(path, text.encode(encoding))


def _join_rows(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    parts = [COLUMN_SEPARATOR.join(header), LINE_SEPARATOR]
    for cells in rows:
        parts.append(COLUMN_SEPARATOR.join(cells))
        parts.append(LINE_SEPARATOR)
    return "".join(parts)
