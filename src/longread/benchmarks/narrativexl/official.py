"""The authors' NarrativeXL file layouts, both ways, byte for byte.

The authors (R-seny/NarrativeXL) store everything as "CSV with multi-symbol
separators": rows end with :data:`LINE_SEPARATOR` (the last row too), cells are
joined with :data:`COLUMN_SEPARATOR`, and a cell holding several entries joins
them with :data:`SUMMARY_SEPARATOR`. The first row is the header. Three kinds:

``BOOK.tagseparated`` (``Dataloaders.BookProcessor.save_summary_data``)
    ChunkInd, BookChunks, OverlappedBookChunks, Summaries, FakeSummaries,
    Failure, Comment. Texts and summaries are ``.strip()``-ed before writing; a
    ``Fail`` row has empty Summaries and FakeSummaries; an ``OK`` row has an
    empty Comment; empty distorted summaries are dropped.
``BOOK.questions_shortform`` (``QuestionGeneration.generate_questions``)
    WHEN_ASKED, RAW_CHUNK, OVERLAPPED_CHUNK, QUESTIONS, QUESTION_ANSWERS,
    QUESTION_TYPES, MEMLOADS; one row per scene; the last four cells hold that
    scene's questions (``RecognitionQuestion.question_string()``, 1-based
    answer, Lookahead/Change/Otherbook, retention demand). Nothing is stripped.
``BOOK.tagseparated_hierarch_sum`` (``save_hierarch_summaries``)
    TRUE_SUMMARY, FALSE_SUMMARY, LEVEL; the string ``None`` for a missing false
    summary. Nothing is stripped.

Files are decoded as the authors' loaders do (utf-8, then utf-16, cp1252,
latin-1), except that an encoding whose first row is not a known header is
passed over (utf-16 "decodes" most cp1252 files into nonsense). Line endings
are kept as they are, so reading and writing again gives the same bytes.
What a file cannot hold (a scene's chapter, its offset in a book with
different whitespace, the comment of an OK row …) is listed in
:func:`canonical_book`.
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from longread.benchmarks.narrativexl.schema import (
    NONE_OF_THE_ABOVE,
    BookSummaries,
    HierarchicalSummary,
    Option,
    OptionKind,
    OptionSource,
    QuestionType,
    ReadAlongQuestion,
    ReadingBook,
    Scene,
    SceneStatus,
    SceneSummaries,
)
from longread.errors import BadInputError
from longread.files import read_bytes

# The authors' settings.py, verbatim.
COLUMN_SEPARATOR = "###THISISOURUNIQUECOLUMNSEPARATORUNLIKELYTOBEENCOUNTEREDINANYBOOK###"
SUMMARY_SEPARATOR = "###THISISOURUNIQUESUMMARYSEPARATORUNLIKELYTOBEENCOUNTEREDINANYBOOK###"
LINE_SEPARATOR = "###THISISOURUNIQUELINESEPARATORUNLIKELYTOBEENCOUNTEREDINANYBOOK###"
OCHUNK_OVERLAP_SYMBOLS = 300
HIERARCHY_GROUP_CHARS = 10000
"""``SummarizeSummariesDetailedEvents2``'s ``max_length``: how many characters of
``"Summary {i}: {text}\\n"`` lines are merged into one next-level summary."""

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
MISSING_FALSE_SUMMARY = "None"
"""What the authors write for a hierarchical summary without a false version."""

QUESTION_PROMPT = "Which of the following scenes was in the book?\n"
"""The first line of ``RecognitionQuestion.question_string()``."""

OFFICIAL_TYPE_NAMES: dict[QuestionType, str] = {
    "lookahead": "Lookahead",
    "change": "Change",
    "otherbook": "Otherbook",
}
_TYPES_BY_OFFICIAL_NAME: dict[str, QuestionType] = {name: kind for kind, name in OFFICIAL_TYPE_NAMES.items()}
_STATUSES: tuple[SceneStatus, ...] = ("OK", "Warning", "Fail")

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
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode(encoding)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with open(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _join_rows(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    parts = [COLUMN_SEPARATOR.join(header), LINE_SEPARATOR]
    for cells in rows:
        parts.append(COLUMN_SEPARATOR.join(cells))
        parts.append(LINE_SEPARATOR)
    return "".join(parts)


# ---------------------------------------------------------------- .tagseparated


def _strip(text: str | None) -> str | None:
    return text.strip() if text else text


def canonical_book(book: BookSummaries) -> BookSummaries:
    """The book as its ``.tagseparated`` file keeps it (what :func:`read_tagseparated` gives back).

    The file holds no chapter and no offset: ``chapter_index`` becomes None and
    ``char_start`` the scene's offset in the scene texts joined by one space (the
    authors' ``" ".join(chunks)``); indexes become row positions. Texts and
    summaries are stripped; empty distorted summaries are dropped; a Fail scene
    has no summary and no distorted ones; an OK scene has no comment.
    """
    texts = [(scene.text.strip(), scene.overlapped.strip()) for scene in book.scenes]
    scenes: list[Scene] = []
    offset = 0
    for index, (text, overlapped) in enumerate(texts):
        scenes.append(Scene(index=index, text=text, overlapped=overlapped, char_start=offset))
        offset += len(text) + 1
    summaries: list[SceneSummaries] = []
    for index, item in enumerate(book.summaries):
        distorted = tuple(d for d in (x.strip() for x in item.distorted) if d)
        summary = _strip(item.summary) or None
        if item.status == "Fail":
            summaries.append(SceneSummaries(index=index, summary=None, status="Fail", comment=item.comment))
        elif item.status == "Warning":
            summaries.append(
                SceneSummaries(
                    index=index, summary=summary, distorted=distorted, status="Warning", comment=item.comment
                )
            )
        else:
            summaries.append(SceneSummaries(index=index, summary=summary, distorted=distorted))
    return BookSummaries(book_id=book.book_id, scenes=tuple(scenes), summaries=tuple(summaries))


def tagseparated_text(book: BookSummaries) -> str:
    """The ``.tagseparated`` file's text as ``save_summary_data`` writes it."""
    if len(book.scenes) != len(book.summaries):
        raise ValueError(
            f"book {book.book_id}: {len(book.scenes)} scenes but {len(book.summaries)} summary rows"
        )
    rows: list[list[str]] = []
    for index, (scene, item) in enumerate(zip(book.scenes, book.summaries, strict=True)):
        chunk, ochunk = scene.text.strip(), scene.overlapped.strip()
        summary = _strip(item.summary) or ""
        distorted = SUMMARY_SEPARATOR.join(d for d in (x.strip() for x in item.distorted) if d)
        if item.status == "Fail":
            rows.append([str(index), chunk, ochunk, "", "", "Fail", item.comment])
        elif item.status == "Warning":
            rows.append([str(index), chunk, ochunk, summary, distorted, "Warning", item.comment])
        else:
            rows.append([str(index), chunk, ochunk, summary, distorted, "OK", ""])
    return _join_rows(TAGSEPARATED_HEADER, rows)


def write_tagseparated(book: BookSummaries, path: str | Path, *, encoding: str = "utf-8") -> None:
    """Write ``BOOK.tagseparated`` exactly as the authors' ``save_summary_data`` does."""
    _write_official(path, tagseparated_text(book), encoding)


def read_tagseparated(path: str | Path) -> BookSummaries:
    """Read a ``.tagseparated`` file (the book id is the file name without the suffix).

    Empty Summaries give ``summary=None`` (Fail rows); FakeSummaries is split on
    the summary separator, empty pieces dropped (the authors read them as None
    and never use them).
    """
    book_id = book_id_from_path(path)
    text = decode_official(path).text
    scenes: list[Scene] = []
    summaries: list[SceneSummaries] = []
    offset = 0
    for number, cells in _data_rows(path, text, "tagseparated", book_id):
        index_text, chunk, ochunk, summary, fakes, status, comment = cells
        index = _parse_int(path, book_id, number, "ChunkInd", index_text)
        if index != len(scenes):
            raise _row_error(path, book_id, number, f"ChunkInd is {index} where {len(scenes)} comes next")
        if status not in _STATUSES:
            raise _row_error(
                path, book_id, number, f"Failure is {status[:40]!r}, not one of {', '.join(_STATUSES)}"
            )
        scenes.append(Scene(index=index, text=chunk, overlapped=ochunk, char_start=offset))
        offset += len(chunk) + 1
        distorted = tuple(piece for piece in fakes.split(SUMMARY_SEPARATOR) if piece) if fakes else ()
        summaries.append(
            SceneSummaries(
                index=index,
                summary=summary or None,
                distorted=distorted,
                status=status,  # type: ignore[arg-type]  # checked against _STATUSES above
                comment=comment,
            )
        )
    return BookSummaries(book_id=book_id, scenes=tuple(scenes), summaries=tuple(summaries))


# ---------------------------------------------------------------- .questions_shortform


def question_string(options: Sequence[str]) -> str:
    """``RecognitionQuestion.question_string()``: the prompt line, then ``k) option`` lines."""
    return QUESTION_PROMPT + "".join(f"{k}) {text}\n" for k, text in enumerate(options, start=1))


def parse_question_string(text: str) -> list[str] | None:
    """The options of a ``question_string()`` text, or None when it does not have that form.

    Options are cut at the next ``\\nK) `` in sequence, so joining them again with
    :func:`question_string` always gives the text back.
    """
    if not text.startswith(QUESTION_PROMPT) or not text.endswith("\n"):
        return None
    body = text[len(QUESTION_PROMPT) : -1]
    options: list[str] = []
    position = 0
    number = 1
    while True:
        prefix = f"{number}) "
        if not body.startswith(prefix, position):
            return None
        start = position + len(prefix)
        following = body.find(f"\n{number + 1}) ", start)
        if following < 0:
            options.append(body[start:])
            return options
        options.append(body[start:following])
        position = following + 1
        number += 1


def question_id(book_id: str, when_asked: int, question_type: str, ordinal: int = 0) -> str:
    """``book/when_asked/type``; a second question of one type at one position gets ``/1`` and so on."""
    base = f"{book_id}/{when_asked}/{question_type}"
    return base if ordinal == 0 else f"{base}/{ordinal}"


def questions_shortform_text(scenes: Sequence[Scene], questions: Sequence[ReadAlongQuestion]) -> str:
    """The ``.questions_shortform`` text as ``generate_questions`` writes it: one row per scene.

    A scene's questions are in the order given; a question asked after a scene
    that does not exist is an error.
    """
    by_position: dict[int, list[ReadAlongQuestion]] = {}
    for question in questions:
        if not 0 <= question.when_asked < len(scenes):
            raise ValueError(
                f"question {question.id} is asked after scene {question.when_asked}, "
                f"but the book has {len(scenes)} scenes"
            )
        by_position.setdefault(question.when_asked, []).append(question)
    rows: list[list[str]] = []
    for index, scene in enumerate(scenes):
        asked = by_position.get(index, [])
        rows.append(
            [
                str(index),
                scene.text,
                scene.overlapped,
                SUMMARY_SEPARATOR.join(question_string([o.text for o in q.options]) for q in asked),
                SUMMARY_SEPARATOR.join(str(q.answer + 1) for q in asked),
                SUMMARY_SEPARATOR.join(OFFICIAL_TYPE_NAMES[q.question_type] for q in asked),
                SUMMARY_SEPARATOR.join(str(q.retention_demand) for q in asked),
            ]
        )
    return _join_rows(QUESTIONS_HEADER, rows)


def write_questions_shortform(
    scenes: Sequence[Scene],
    questions: Sequence[ReadAlongQuestion],
    path: str | Path,
    *,
    encoding: str = "utf-8",
) -> None:
    """Write ``BOOK.questions_shortform`` exactly as the authors' ``generate_questions`` does."""
    _write_official(path, questions_shortform_text(scenes, questions), encoding)


def reading_book_scenes(book: ReadingBook) -> tuple[Scene, ...]:
    """A ReadingBook's scenes as Scene objects (for :func:`write_questions_shortform`)."""
    if book.overlapped and len(book.overlapped) != len(book.scenes):
        raise ValueError(
            f"book {book.book_id}: {len(book.scenes)} scenes but {len(book.overlapped)} overlapped"
        )
    overlapped = book.overlapped or book.scenes
    scenes: list[Scene] = []
    offset = 0
    for index, (text, with_overlap) in enumerate(zip(book.scenes, overlapped, strict=True)):
        scenes.append(Scene(index=index, text=text, overlapped=with_overlap, char_start=offset))
        offset += len(text) + 1
    return tuple(scenes)


def write_reading_book(book: ReadingBook, path: str | Path, *, encoding: str = "utf-8") -> None:
    """Write a ReadingBook as ``.questions_shortform`` (its overlapped texts, or the scenes when unknown)."""
    write_questions_shortform(reading_book_scenes(book), book.questions, path, encoding=encoding)


def _split_cell(cell: str) -> list[str]:
    return cell.split(SUMMARY_SEPARATOR) if cell else []


def read_questions_shortform(path: str | Path) -> ReadingBook:
    """Read a ``.questions_shortform`` file into a ReadingBook.

    Scenes are the RAW_CHUNK column in order. Each question's options come from
    its text; the answer is the 1-based QUESTION_ANSWERS entry; the true scene is
    ``WHEN_ASKED - MEMLOAD`` (the authors' retention demand) unless the answer
    is "None of the above.". The published files keep no decoy provenance, so
    options get what can be derived: the answer is ``true`` (this book, the
    true scene) or ``none``; the last "None of the above." is ``none``; every
    other option has the question's decoy kind, with this book for look-ahead
    and change decoys and no book for other-book decoys, and no scene.
    """
    book_id = book_id_from_path(path)
    text = decode_official(path).text
    scenes: list[str] = []
    overlapped: list[str] = []
    questions: list[ReadAlongQuestion] = []
    for number, cells in _data_rows(path, text, "questions_shortform", book_id):
        when_text, chunk, ochunk, texts_cell, answers_cell, types_cell, loads_cell = cells
        when_asked = _parse_int(path, book_id, number, "WHEN_ASKED", when_text)
        if when_asked != len(scenes):
            raise _row_error(
                path, book_id, number, f"WHEN_ASKED is {when_asked} where {len(scenes)} comes next"
            )
        scenes.append(chunk)
        overlapped.append(ochunk)
        columns = [_split_cell(c) for c in (texts_cell, answers_cell, types_cell, loads_cell)]
        counts = [len(c) for c in columns]
        if len(set(counts)) != 1:
            raise _row_error(
                path,
                book_id,
                number,
                "QUESTIONS, QUESTION_ANSWERS, QUESTION_TYPES and MEMLOADS hold "
                f"{'/'.join(map(str, counts))} entries; they must hold one per question",
            )
        seen: Counter[str] = Counter()
        for position, (q_text, answer_text, type_text, load_text) in enumerate(zip(*columns, strict=True)):
            where = f"question {position + 1}"
            question_type = _TYPES_BY_OFFICIAL_NAME.get(type_text)
            if question_type is None:
                raise _row_error(
                    path,
                    book_id,
                    number,
                    f"{where}: QUESTION_TYPES entry {type_text[:40]!r} is not Lookahead, Change or Otherbook",
                    "mixed-decoy questions are not supported (the authors' generator never makes them)",
                )
            options = parse_question_string(q_text)
            if options is None or len(options) < 2:
                raise _row_error(
                    path,
                    book_id,
                    number,
                    f"{where}: the text is not 'Which of the following scenes was in the book?' "
                    "followed by two or more options numbered '1) ', '2) ' … each ending in a newline",
                )
            answer = _parse_int(path, book_id, number, f"{where} QUESTION_ANSWERS", answer_text) - 1
            if not 0 <= answer < len(options):
                raise _row_error(
                    path,
                    book_id,
                    number,
                    f"{where}: answer {answer + 1} is out of range 1..{len(options)}",
                )
            load = _parse_int(path, book_id, number, f"{where} MEMLOADS", load_text)
            none_answer = options[answer] == NONE_OF_THE_ABOVE
            true_scene = None if none_answer else when_asked - load
            if true_scene is not None and not 0 <= true_scene <= when_asked:
                raise _row_error(
                    path,
                    book_id,
                    number,
                    f"{where}: MEMLOADS {load} puts the true scene at {true_scene}, outside 0..{when_asked}",
                )
            built = tuple(
                Option(
                    text=option, source=_derived_source(k, answer, option, question_type, book_id, true_scene)
                )
                for k, option in enumerate(options)
            )
            questions.append(
                ReadAlongQuestion(
                    id=question_id(book_id, when_asked, question_type, seen[question_type]),
                    book_id=book_id,
                    when_asked=when_asked,
                    question_type=question_type,
                    options=built,
                    answer=answer,
                    retention_demand=load,
                    true_scene=true_scene,
                )
            )
            seen[question_type] += 1
    return ReadingBook(
        book_id=book_id,
        scenes=tuple(scenes),
        questions=tuple(questions),
        source=str(path),
        overlapped=tuple(overlapped),
    )


def _derived_source(
    position: int,
    answer: int,
    text: str,
    question_type: QuestionType,
    book_id: str,
    true_scene: int | None,
) -> OptionSource:
    if position == answer:
        if true_scene is None:
            return OptionSource(kind="none")
        return OptionSource(kind="true", book_id=book_id, scene=true_scene)
    if text == NONE_OF_THE_ABOVE:
        return OptionSource(kind="none")
    kind: OptionKind = question_type
    return OptionSource(kind=kind, book_id=None if question_type == "otherbook" else book_id)


# ---------------------------------------------------------------- hierarchical summaries


def group_for_next_level(summaries: Sequence[str], max_chars: int = HIERARCHY_GROUP_CHARS) -> list[list[int]]:
    """Which summaries the authors merge into each next-level summary.

    ``SummarizeSummariesDetailedEvents2`` writes ``"Summary {i}: {text}\\n"`` for
    each and joins consecutive lines while the group stays within ``max_chars``
    (``utils.BookProcessing.rechunk_book``; a group always takes at least one).
    """
    groups: list[list[int]] = []
    current: list[int] = []
    current_chars = 0
    for index, text in enumerate(summaries):
        line_chars = len(f"Summary {index}: {text}\n")
        if current_chars + line_chars <= max_chars or current_chars == 0:
            current.append(index)
            current_chars += line_chars
        else:
            groups.append(current)
            current, current_chars = [index], line_chars
    if current:
        groups.append(current)
    return groups


def infer_scene_ranges(items: Sequence[HierarchicalSummary]) -> list[HierarchicalSummary]:
    """Fill first/last scene by replaying the authors' grouping level by level.

    Level 0 summaries cover their own scene. A level's ranges are known when
    the previous level's are and the authors' grouping of the previous level
    gives exactly as many groups as this level has summaries; otherwise (a
    merge failed, or another grouping was used) they stay as they are.
    """
    by_level: dict[int, list[HierarchicalSummary]] = {}
    for item in items:
        by_level.setdefault(item.level, []).append(item)
    ranges: dict[tuple[int, int], tuple[int | None, int | None]] = {}
    for level in sorted(by_level):
        members = by_level[level]
        if level == 0:
            for item in members:
                ranges[(0, item.index)] = (item.index, item.index)
            continue
        below = by_level.get(level - 1)
        if not below:
            continue
        groups = group_for_next_level([item.true for item in below])
        if len(groups) != len(members):
            continue
        for item, group in zip(members, groups, strict=True):
            first = ranges.get((level - 1, below[group[0]].index), (None, None))[0]
            last = ranges.get((level - 1, below[group[-1]].index), (None, None))[1]
            if first is not None and last is not None:
                ranges[(level, item.index)] = (first, last)
    result = []
    for item in items:
        known = ranges.get((item.level, item.index))
        if known is None:
            result.append(item)
        else:
            result.append(item.model_copy(update={"first_scene": known[0], "last_scene": known[1]}))
    return result


def hierarchical_text(items: Sequence[HierarchicalSummary]) -> str:
    """The ``.tagseparated_hierarch_sum`` text as ``save_hierarch_summaries`` writes it, rows in order."""
    rows = [
        [item.true, MISSING_FALSE_SUMMARY if item.false is None else item.false, str(item.level)]
        for item in items
    ]
    return _join_rows(HIERARCHICAL_HEADER, rows)


def write_hierarchical(
    items: Sequence[HierarchicalSummary], path: str | Path, *, encoding: str = "utf-8"
) -> None:
    """Write ``BOOK.tagseparated_hierarch_sum`` exactly as the authors' ``save_hierarch_summaries`` does."""
    _write_official(path, hierarchical_text(items), encoding)


def read_hierarchical(path: str | Path, *, infer_ranges: bool = True) -> list[HierarchicalSummary]:
    """Read a ``.tagseparated_hierarch_sum`` file; ``None`` as FALSE_SUMMARY means no false version.

    ``index`` counts the rows of each level in file order; scene ranges are
    inferred with :func:`infer_scene_ranges` unless ``infer_ranges`` is False.
    """
    book_id = book_id_from_path(path)
    text = decode_official(path).text
    items: list[HierarchicalSummary] = []
    per_level: Counter[int] = Counter()
    for number, (true, false, level_text) in _data_rows(path, text, "hierarchical", book_id):
        level = _parse_int(path, book_id, number, "LEVEL", level_text)
        if level < 0:
            raise _row_error(path, book_id, number, f"LEVEL is {level}; levels start at 0")
        items.append(
            HierarchicalSummary(
                level=level,
                index=per_level[level],
                true=true,
                false=None if false == MISSING_FALSE_SUMMARY else false,
            )
        )
        per_level[level] += 1
    return infer_scene_ranges(items) if infer_ranges else items
