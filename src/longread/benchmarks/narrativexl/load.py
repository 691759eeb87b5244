"""Find and read NarrativeXL books for evaluation: a build directory, official files, or longread JSON.

Read-along books (:func:`load_reading_books`) come from

- a longread build directory: ``readalong/<book_id>.json`` (a ReadingBook with
  every option's origin); without that folder, ``questions/*.questions_shortform``;
- the authors' ``*.questions_shortform`` files: one file, several, or a
  directory of them (the published archive);
- ``*.json`` ReadingBook files or a directory of them; a ``*.jsonl`` file of ReadingBooks, one a line (as
  ``longread horizon`` writes the questions it chose, each a book of its own);
- a ``longread export narrativexl --to hf`` folder (its ``longread_instances`` config).

Scene-summary books (:func:`load_book_summaries`) come from a ``.tagseparated``
file, a build directory's ``books/*.tagseparated``, a directory of them, or
BookSummaries ``*.json`` files, or a ``longread export narrativexl-summaries --to hf``
folder. Books come back sorted by id; two files with
one book id are an error naming both.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from longread.benchmarks.narrativexl.exported import load_exported_reading, load_exported_summaries
from longread.benchmarks.narrativexl.schema import BookSummaries, ReadingBook
from longread.errors import BadInputError
from longread.evaluation.exported import is_export

QUESTIONS_SUFFIX = ".questions_shortform"
TAGSEPARATED_SUFFIX = ".tagseparated"

ModelT = TypeVar("ModelT", bound=BaseModel)


def _read_json(path: Path, model: type[ModelT]) -> ModelT:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return model.model_validate(data)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInputError(path, f"cannot read it as JSON ({exc})", "rebuild it or check the file") from None
    except ValidationError as exc:
        raise BadInputError(
            path,
            f"not a {model.__name__}: {_problem(exc, 'the file')}",
            "give a file written by `longread build narrativexl` (or the authors' official files)",
        ) from None


def _problem(exc: ValidationError, whole: str) -> str:
    """The first problem pydantic found: where (``whole`` when it is the whole value) and what."""
    problem = exc.errors()[0]
    where = ".".join(str(part) for part in problem["loc"]) or whole
    return f"{where}: {problem['msg']}"


def _read_questions_shortform(path: Path) -> ReadingBook:
    from longread.benchmarks.narrativexl.official import read_questions_shortform

    return read_questions_shortform(path)


def _read_tagseparated(path: Path) -> BookSummaries:
    from longread.benchmarks.narrativexl.official import read_tagseparated

    return read_tagseparated(path)


def _files(path: Path, build_folder: str, official_suffix: str) -> list[Path]:
    """The files a path names: itself, a build directory's folder, or a directory's own files."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise BadInputError(path, "no such file or directory")
    if build_folder == "readalong" and (path / "readalong").is_dir():
        found = sorted((path / "readalong").glob("*.json"))
        if found:
            return found
    for folder in (path / build_folder, path / "questions", path):
        if not folder.is_dir():
            continue
        found = sorted(folder.glob(f"*{official_suffix}"))
        if found:
            return found
    found = sorted(path.glob("*.json"))
    if found:
        return found
    raise BadInputError(
        path,
        f"no {build_folder}/*.json, *{official_suffix} or *.json books in it",
        "give a `longread build narrativexl` directory or the authors' files",
    )


def _load(
    paths: Path | Sequence[Path],
    build_folder: str,
    official_suffix: str,
    read_official: Callable[[Path], ModelT],
    model: type[ModelT],
    book_id: Callable[[ModelT], str],
) -> list[ModelT]:
    given = [paths] if isinstance(paths, Path) else list(paths)
    files = [file for path in given for file in _files(Path(path), build_folder, official_suffix)]
    books: dict[str, tuple[Path, ModelT]] = {}
    for file in files:
        if file.name.endswith(official_suffix):
            read = [read_official(file)]
        elif file.suffix == ".json":
            read = [_read_json(file, model)]
        elif file.suffix == ".jsonl":
            read = _read_json_lines(file, model)
        else:
            raise BadInputError(file, f"not a {official_suffix}, .json or .jsonl file")
        for book in read:
            key = book_id(book)
            if key in books:
                raise BadInputError(
                    file,
                    f"book {key!r} is also in {books[key][0]}",
                    "give each book once (one build or one archive)",
                )
            books[key] = (file, book)
    return [books[key][1] for key in sorted(books)]


def _read_json_lines(path: Path, model: type[ModelT]) -> list[ModelT]:
    """One ``model`` a line; an error names the line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(path, f"cannot read it as UTF-8 text ({exc})", "rebuild it") from None
    found: list[ModelT] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            found.append(model.model_validate_json(line))
        except ValidationError as exc:
            raise BadInputError(
                path,
                f"line {number} is not a {model.__name__}: {_problem(exc, 'the line')}",
                "write one book as JSON on each line (`longread horizon` writes such files)",
            ) from None
    if not found:
        raise BadInputError(path, "no book in it", "give a file with one book as JSON on each line")
    return found


def _export_folder(paths: Path | Sequence[Path]) -> Path | None:
    """The folder when ``paths`` is one ``longread export --to hf`` folder (None otherwise)."""
    if isinstance(paths, str | Path) and is_export(Path(paths)):
        return Path(paths)
    return None


def load_reading_books(paths: Path | Sequence[Path]) -> list[ReadingBook]:
    """Read-along books (scenes, questions) from a build directory, official files, JSON or an hf export."""
    folder = _export_folder(paths)
    if folder is not None:
        books = load_exported_reading(folder)
    else:
        books = _load(
            paths, "readalong", QUESTIONS_SUFFIX, _read_questions_shortform, ReadingBook, lambda b: b.book_id
        )
    for book in books:
        for question in book.questions:
            if not 0 <= question.when_asked < len(book.scenes):
                raise BadInputError(
                    book.source or None,
                    f"question {question.id} is asked after scene {question.when_asked}, but book "
                    f"{book.book_id} has {len(book.scenes)} scenes",
                    "the scenes and questions do not belong together; rebuild the book",
                )
    return books


def load_book_summaries(paths: Path | Sequence[Path]) -> list[BookSummaries]:
    """Scenes with true and distorted summaries from ``.tagseparated`` files, a build directory, JSON or
    an hf export."""
    folder = _export_folder(paths)
    if folder is not None:
        return load_exported_summaries(folder)
    return _load(paths, "books", TAGSEPARATED_SUFFIX, _read_tagseparated, BookSummaries, lambda b: b.book_id)
