"""``BOOK.questions_shortform`` (the authors' ``QuestionGeneration.generate_questions``), both ways.

The rule: WHEN_ASKED, RAW_CHUNK, OVERLAPPED_CHUNK, QUESTIONS, QUESTION_ANSWERS,
QUESTION_TYPES, MEMLOADS; one row per scene; the last four cells hold that
scene's questions (``RecognitionQuestion.question_string()``, 1-based answer,
Lookahead/Change/Otherbook, retention demand), joined with the summary
separator. Nothing is stripped. Reading derives each option's origin as far as
the file allows (see :func:`read_questions_shortform`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from longread.benchmarks.narrativexl.official.layout import (
    QUESTIONS_HEADER,
    SUMMARY_SEPARATOR,
    _data_rows,
    _join_rows,
    _parse_int,
    _row_error,
    _write_official,
    book_id_from_path,
    decode_official,
)
from longread.benchmarks.narrativexl.schema import (
    NONE_OF_THE_ABOVE,
    Option,
    OptionKind,
    OptionSource,
    QuestionType,
    ReadAlongQuestion,
    ReadingBook,
    Scene,
)

QUESTION_PROMPT = "Which of the following scenes was in the book?\n"
"""The first line of ``RecognitionQuestion.question_string()``."""

OFFICIAL_TYPE_NAMES: dict[QuestionType, str] = {
    "lookahead": "Lookahead",
    "change": "Change",
    "otherbook": "Otherbook",
}
_TYPES_BY_OFFICIAL_NAME: dict[str, QuestionType] = {name: kind for kind, name in OFFICIAL_TYPE_NAMES.items()}


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
        cells_of_questions = (texts_cell, answers_cell, types_cell, loads_cell)
        questions += _row_questions(path, book_id, number, when_asked, cells_of_questions)
    return ReadingBook(
        book_id=book_id,
        scenes=tuple(scenes),
        questions=tuple(questions),
        source=str(path),
        overlapped=tuple(overlapped),
    )


def _row_questions(
    path: str | Path, book_id: str, number: int, when_asked: int, cells: tuple[str, str, str, str]
) -> list[ReadAlongQuestion]:
    """The questions asked after scene ``when_asked``: one per entry of QUESTIONS, QUESTION_ANSWERS,
    QUESTION_TYPES and MEMLOADS."""
    columns = [_split_cell(c) for c in cells]
    counts = [len(c) for c in columns]
    if len(set(counts)) != 1:
        raise _row_error(
            path,
            book_id,
            number,
            "QUESTIONS, QUESTION_ANSWERS, QUESTION_TYPES and MEMLOADS hold "
            f"{'/'.join(map(str, counts))} entries; they must hold one per question",
        )
    questions: list[ReadAlongQuestion] = []
    seen: Counter[str] = Counter()
    for position, entries in enumerate(zip(*columns, strict=True)):
        question = _read_question(
            path, book_id, number, when_asked, f"question {position + 1}", entries, seen
        )
        questions.append(question)
        seen[question.question_type] += 1
    return questions


def _read_question(
    path: str | Path,
    book_id: str,
    number: int,
    when_asked: int,
    where: str,
    entries: tuple[str, ...],
    seen: Counter[str],
) -> ReadAlongQuestion:
    """One question of a row from its four entries (``seen``: how many of each type came before it)."""
    q_text, answer_text, type_text, load_text = entries
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
        Option(text=option, source=_derived_source(k, answer, option, question_type, book_id, true_scene))
        for k, option in enumerate(options)
    )
    return ReadAlongQuestion(
        id=question_id(book_id, when_asked, question_type, seen[question_type]),
        book_id=book_id,
        when_asked=when_asked,
        question_type=question_type,
        options=built,
        answer=answer,
        retention_demand=load,
        true_scene=true_scene,
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
