"""``BOOK.tagseparated`` (the authors' ``Dataloaders.BookProcessor.save_summary_data``), both ways.

The rule: ChunkInd, BookChunks, OverlappedBookChunks, Summaries, FakeSummaries,
Failure, Comment; texts and summaries are ``.strip()``-ed before writing; a
``Fail`` row has empty Summaries and FakeSummaries; an ``OK`` row has an empty
Comment; empty distorted summaries are dropped. :func:`canonical_book` is the
book as such a file keeps it.
"""

from __future__ import annotations

from pathlib import Path

from longread.benchmarks.narrativexl.official.layout import (
    SUMMARY_SEPARATOR,
    TAGSEPARATED_HEADER,
    _data_rows,
    _join_rows,
    _parse_int,
    _row_error,
    _write_official,
    book_id_from_path,
    decode_official,
)
from longread.benchmarks.narrativexl.schema import BookSummaries, Scene, SceneStatus, SceneSummaries

_STATUSES: tuple[SceneStatus, ...] = ("OK", "Warning", "Fail")


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
