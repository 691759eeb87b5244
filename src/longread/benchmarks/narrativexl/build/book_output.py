"""One built book on disk: its character names substituted, then written in every layout.

The renaming applies a book's :class:`~.entities.EntityMap` to its scenes, summaries,
hierarchical summaries, question options and corrections (the authors substitute at
write time); :func:`write_book` writes the official layouts, the read-along JSON,
the corrections and the name map under the build directory.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from longread.benchmarks.narrativexl.names import EntityMap, apply_entity_map
from longread.benchmarks.narrativexl.official import (
    write_hierarchical,
    write_questions_shortform,
    write_tagseparated,
)
from longread.benchmarks.narrativexl.schema import (
    BookSummaries,
    CorrectionQuestion,
    HierarchicalSummary,
    Option,
    ReadAlongQuestion,
    ReadingBook,
    Scene,
    SceneSummaries,
)
from longread.documents.book import Book
from longread.files import atomic_write_text


def rename_summaries(book: BookSummaries, names: EntityMap) -> BookSummaries:
    scenes = tuple(
        Scene(
            index=scene.index,
            text=apply_entity_map(scene.text, names),
            overlapped=apply_entity_map(scene.overlapped, names),
            char_start=scene.char_start,
            chapter_index=scene.chapter_index,
        )
        for scene in book.scenes
    )
    summaries = tuple(
        SceneSummaries(
            index=item.index,
            summary=None if item.summary is None else apply_entity_map(item.summary, names),
            distorted=tuple(apply_entity_map(text, names) for text in item.distorted),
            status=item.status,
            comment=item.comment,
        )
        for item in book.summaries
    )
    return BookSummaries(book_id=book.book_id, scenes=scenes, summaries=summaries)


def rename_hierarchical(item: HierarchicalSummary, names: EntityMap) -> HierarchicalSummary:
    return item.model_copy(
        update={
            "true": apply_entity_map(item.true, names),
            "false": None if item.false is None else apply_entity_map(item.false, names),
        }
    )


def rename_question(question: ReadAlongQuestion, names: EntityMap) -> ReadAlongQuestion:
    options = tuple(
        Option(text=apply_entity_map(option.text, names), source=option.source) for option in question.options
    )
    return question.model_copy(update={"options": options})


def rename_correction(question: CorrectionQuestion, names: EntityMap) -> CorrectionQuestion:
    return question.model_copy(
        update={
            "distorted": apply_entity_map(question.distorted, names),
            "target": apply_entity_map(question.target, names),
        }
    )


def write_book(
    out: Path,
    summaries: BookSummaries,
    hierarchy: Sequence[HierarchicalSummary],
    questions: Sequence[ReadAlongQuestion],
    corrections: Sequence[CorrectionQuestion],
    names: EntityMap,
    book: Book,
) -> None:
    book_id = summaries.book_id
    for folder in ("books", "questions", "hierarchical", "readalong", "corrections", "entity_maps"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    write_tagseparated(summaries, out / "books" / f"{book_id}.tagseparated")
    write_questions_shortform(
        summaries.scenes, questions, out / "questions" / f"{book_id}.questions_shortform"
    )
    if hierarchy:
        write_hierarchical(hierarchy, out / "hierarchical" / f"{book_id}.tagseparated_hierarch_sum")
        # the authors' layout has no room for scene ranges or a failed merge: the JSON lines keep them
        atomic_write_text(
            out / "hierarchical" / f"{book_id}.jsonl",
            "".join(
                json.dumps(item.model_dump(mode="json"), ensure_ascii=False, sort_keys=True) + "\n"
                for item in hierarchy
            ),
        )
    reading = ReadingBook(
        book_id=book_id,
        scenes=tuple(scene.text for scene in summaries.scenes),
        questions=tuple(questions),
        source=book.source,
    )
    atomic_write_text(
        out / "readalong" / f"{book_id}.json",
        json.dumps(reading.model_dump(mode="json"), ensure_ascii=False, sort_keys=True) + "\n",
    )
    atomic_write_text(
        out / "corrections" / f"{book_id}.jsonl",
        "".join(
            json.dumps(item.model_dump(mode="json"), ensure_ascii=False, sort_keys=True) + "\n"
            for item in corrections
        ),
    )
    names.save(out / "entity_maps" / f"{book_id}.json")
