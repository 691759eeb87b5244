"""``longread build narrativexl``: books → scenes → summaries → names substituted → read-along questions.

The steps follow the authors' pipeline (ProcessBooks → entity replacement →
QuestionGeneration → hierarchical summaries) with a seeded RNG everywhere:

1. each book is read (front matter already gone) and cut into sentence-aligned
   scenes (:mod:`.scenes`); ``max_scenes`` keeps the first N;
2. every scene is summarised and distorted through the backend's generation,
   cached in ``DIR/.cache`` so a killed build resumes (:mod:`.summarise`); scene
   summaries are merged level by level into one book summary (hierarchical);
3. the characters of each book are found (spaCy PERSON) and get seeded
   replacement names of the same guessed gender (:mod:`.entities`);
4. read-along questions are drawn from the ORIGINAL summaries (other-book decoys
   adapted to this book's characters), then the book's name map is applied to
   its scenes, summaries, options and corrections — as the authors substitute
   at write time (:mod:`.book_output`);
5. everything is written in the official layouts and as longread JSON
   (:mod:`.book_output`), with a build report of what was skipped and why
   (:mod:`.build_report`).

Layout of ``DIR``::

    build_settings.json   what was built and how (seed, model, settings)
    build_report.json     per book: scenes, statuses, questions by type, skipped and why
    books/<id>.tagseparated                    the authors' TrueAndFalseSummaries layout
    questions/<id>.questions_shortform         the authors' question layout
    hierarchical/<id>.tagseparated_hierarch_sum
    readalong/<id>.json   scenes + questions with every option's origin (what `eval` reads)
    corrections/<id>.jsonl summary-correction questions
    entity_maps/<id>.json  original → replacement names
    .cache/generations.jsonl  the generation cache (not part of the data's hash)
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from longread.benchmarks.narrativexl.build.book_output import (
    rename_correction,
    rename_hierarchical,
    rename_question,
    rename_summaries,
    write_book,
)
from longread.benchmarks.narrativexl.build.report import (
    BUILD_REPORT_FILE,
    BookOutcome,
    NarrativeXLBuildReport,
)
from longread.benchmarks.narrativexl.names import EntityMap, adapt_other_book, build_entity_map
from longread.benchmarks.narrativexl.official import write_tagseparated
from longread.benchmarks.narrativexl.questions import (
    QuestionSettings,
    make_correction_questions,
    make_readalong_questions,
)
from longread.benchmarks.narrativexl.scenes import SceneCut, SceneSettings, cut_scenes
from longread.benchmarks.narrativexl.schema import BookSummaries, HierarchicalSummary
from longread.benchmarks.narrativexl.summaries import (
    SummarySettings,
    hierarchical_summaries,
    summarise_scenes,
)
from longread.benchmarks.narrativexl.summaries.cache import GenerationCache
from longread.documents.book import Book
from longread.documents.corpus import iter_books
from longread.errors import BadInputError, LongreadError
from longread.files import atomic_write_text

__all__ = [
    "BUILD_SETTINGS_FILE",
    "CACHE_DIR",
    "NarrativeXLBuildSettings",
    "build_narrativexl",
]

logger = logging.getLogger(__name__)

BUILD_SETTINGS_FILE = "build_settings.json"
CACHE_DIR = ".cache"


class NarrativeXLBuildSettings(BaseModel):
    """Everything that defines a build's output (recorded in ``build_settings.json``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int = 0
    max_scenes: int | None = None
    """Keep only each book's first N scenes (a quick build); None: the whole narrative."""
    substitute_names: bool = True
    hierarchical: bool = True
    scenes: SceneSettings = SceneSettings()
    summaries: SummarySettings = SummarySettings()
    questions: QuestionSettings = QuestionSettings()


def _rng(seed: int, *parts: str) -> np.random.Generator:
    """A generator for one purpose of one book: independent of other books and of the order of books."""
    digest = hashlib.sha256("\0".join([str(seed), *parts]).encode("utf-8")).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def build_narrativexl(
    sources: Sequence[str | Path],
    out: Path,
    backend: Any,
    settings: NarrativeXLBuildSettings = NarrativeXLBuildSettings(),
    *,
    decoy_sources: Sequence[str | Path] = (),
    decoy_max_scenes: int | None = None,
    show_progress: bool = True,
    log: Callable[[str], None] = logger.info,
) -> NarrativeXLBuildReport:
    """Build NarrativeXL from ``sources`` (book files, folders, archives) into the directory ``out``.

    ``decoy_sources`` are books that only lend summaries to other-book decoys (their first
    ``decoy_max_scenes`` scenes are summarised; they get no questions of their own): a small
    build about one book still gets the authors' other-book questions.
    """
    out.mkdir(parents=True, exist_ok=True)
    report = NarrativeXLBuildReport(out=out)
    cache = GenerationCache(out / CACHE_DIR, model=backend.describe())
    books = _read_books(sources, report)
    decoys = _read_books(decoy_sources, report)
    if not books:
        raise LongreadError(
            "no readable book among the sources: "
            + ("; ".join(reason for _, reason in report.skipped_books) or "none given")
        )
    seen: set[str] = set()
    for book in [*books, *decoys]:
        if book.id in seen:
            raise LongreadError(f"two books share the id {book.id!r}: give each book once")
        seen.add(book.id)
    decoy_ids = {book.id for book in decoys}

    built: dict[str, tuple[Book, BookSummaries, list[HierarchicalSummary]]] = {}
    outcomes: dict[str, BookOutcome] = {}
    everything = [*books, *decoys]
    for number, book in enumerate(everything, start=1):
        outcome = BookOutcome(book_id=book.id, title=book.title)
        try:
            cut = cut_scenes(book, settings.scenes)
        except BadInputError as exc:
            report.skipped_books.append((book.id, str(exc)))
            continue
        scenes = list(cut.scenes)
        limit = decoy_max_scenes if book.id in decoy_ids else settings.max_scenes
        if limit is not None and len(scenes) > limit:
            outcome.left_out.append(f"scenes {limit}–{len(scenes) - 1} (at most {limit} scenes)")
            scenes = scenes[:limit]
        outcome.left_out.extend(_left_out_lines(cut))
        role = " (decoys only)" if book.id in decoy_ids else ""
        log(f"[{number}/{len(everything)}] {book.id}{role}: summarising {len(scenes)} scenes")
        is_decoy = book.id in decoy_ids
        # A decoy book lends only true summaries (other-book decoys): one distortion per scene, no hierarchy.
        summary_settings = (
            settings.summaries.model_copy(update={"distortions_for_scene_0": 1})
            if is_decoy
            else settings.summaries
        )
        summaries = summarise_scenes(scenes, backend, cache, summary_settings, show_progress=show_progress)
        hierarchy = (
            hierarchical_summaries(book.id, summaries, backend, cache, settings.summaries)
            if settings.hierarchical and not is_decoy
            else []
        )
        built[book.id] = (
            book,
            BookSummaries(book_id=book.id, scenes=tuple(scenes), summaries=tuple(summaries)),
            hierarchy,
        )
        outcome.scenes = len(scenes)
        for item in summaries:
            outcome.statuses[item.status] = outcome.statuses.get(item.status, 0) + 1
            if item.status != "OK":
                outcome.failed_scenes.append(f"{item.index}: {item.status} — {item.comment}")
        outcomes[book.id] = outcome
    report.generated, report.cached = cache.made, cache.hits

    maps: dict[str, EntityMap] = {}
    for book_id, (_, summaries_of_book, _) in built.items():
        maps[book_id] = build_entity_map(
            "".join(scene.text for scene in summaries_of_book.scenes), book_id=book_id, seed=settings.seed
        )
        outcomes[book_id].characters = len(maps[book_id].entries)

    def adapt(text: str, from_book: str, to_book: str) -> str:
        return adapt_other_book(text, maps[from_book], maps[to_book])

    for book_id, (book, summaries_of_book, hierarchy) in built.items():
        outcome = outcomes[book_id]
        if book_id in decoy_ids:
            outcome.role = "decoys only"
            for folder in ("books", "entity_maps"):
                (out / folder).mkdir(parents=True, exist_ok=True)
            maps[book_id].save(out / "entity_maps" / f"{book_id}.json")
            if settings.substitute_names:
                summaries_of_book = rename_summaries(summaries_of_book, maps[book_id])
            write_tagseparated(summaries_of_book, out / "books" / f"{book_id}.tagseparated")
            report.books.append(outcome)
            continue
        others = [other for other_id, (_, other, _) in built.items() if other_id != book_id]
        drawn = make_readalong_questions(
            summaries_of_book,
            others,
            adapt=adapt,
            rng=_rng(settings.seed, "questions", book_id),
            settings=settings.questions,
        )
        questions = list(drawn.questions)
        outcome.skipped_questions = dict(drawn.skipped)
        corrections = make_correction_questions(book_id, hierarchy, len(summaries_of_book.scenes))
        if settings.substitute_names:
            name_map = maps[book_id]
            summaries_of_book = rename_summaries(summaries_of_book, name_map)
            hierarchy = [rename_hierarchical(item, name_map) for item in hierarchy]
            questions = [rename_question(question, name_map) for question in questions]
            corrections = [rename_correction(question, name_map) for question in corrections]
        for question in questions:
            outcome.questions[question.question_type] = outcome.questions.get(question.question_type, 0) + 1
            outcome.none_answers += int(question.none_is_answer)
        outcome.corrections = len(corrections)
        write_book(out, summaries_of_book, hierarchy, questions, corrections, maps[book_id], book)
        report.books.append(outcome)
    atomic_write_text(
        out / BUILD_SETTINGS_FILE,
        json.dumps(
            {"settings": settings.model_dump(mode="json"), "model": backend.describe()},
            indent=2,
            sort_keys=True,
            ensure_ascii=False,
        )
        + "\n",
    )
    atomic_write_text(
        out / BUILD_REPORT_FILE,
        json.dumps(report.as_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n",
    )
    return report


def _read_books(sources: Sequence[str | Path], report: NarrativeXLBuildReport) -> list[Book]:
    books: list[Book] = []
    for item in iter_books(list(sources)):
        if isinstance(item, BadInputError):
            report.skipped_books.append((str(getattr(item, "path", "") or "?"), str(item)))
            continue
        books.append(item)
    return books


def _left_out_lines(cut: SceneCut) -> list[str]:
    lines = [
        f"{item.kind} in chapter {item.chapter_index} ({item.chars:,} chars): {item.opening!r}"
        for item in cut.left_out
    ]
    if cut.split_sentences:
        lines.append(f"{cut.split_sentences} sentence(s) longer than a scene cut at a space")
    return lines
