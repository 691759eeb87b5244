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
    hierarchical/<id>.jsonl  the same summaries with scene ranges and why a merge failed (merge_failure)
    readalong/<id>.json   scenes + questions with every option's origin (what `eval` reads)
    corrections/<id>.jsonl summary-correction questions
    entity_maps/<id>.json  original → replacement names
    .cache/generations.jsonl  the generation cache (not part of the data's hash)
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
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
    drop_repeated_options,
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
from longread.documents.reader import ExcludedBook, ReadOptions
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
SKIP_REPEATED_AFTER_RENAMING = "two options with the same text once names were substituted"


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


Built = dict[str, tuple[Book, BookSummaries, list[HierarchicalSummary]]]
"""Each summarised book by id: the book, its scene summaries, its hierarchical summaries."""


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
    exclude: tuple[tuple[str, str], ...] = (),
) -> NarrativeXLBuildReport:
    """Build NarrativeXL from ``sources`` (book files, folders, archives) into the directory ``out``.

    ``decoy_sources`` are books that only lend summaries to other-book decoys (their first
    ``decoy_max_scenes`` scenes are summarised; they get no questions of their own): a small
    build about one book still gets the authors' other-book questions. ``exclude`` (book id, why): books
    left out on purpose, listed in the report (``--exclude-remembered``).
    """
    out.mkdir(parents=True, exist_ok=True)
    report = NarrativeXLBuildReport(out=out)
    cache = GenerationCache(out / CACHE_DIR, model=backend.describe())
    books, decoys = _read_all_books(sources, decoy_sources, report, ReadOptions(exclude=exclude))
    decoy_ids = {book.id for book in decoys}
    built, outcomes = _summarise_books(
        [*books, *decoys], decoy_ids, decoy_max_scenes, backend, cache, settings, show_progress, log, report
    )
    report.generated, report.cached = cache.made, cache.hits
    maps = _entity_maps(built, outcomes, settings.seed)
    for book_id, (book, summaries_of_book, hierarchy) in built.items():
        outcome = outcomes[book_id]
        if book_id in decoy_ids:
            _write_decoy_book(out, summaries_of_book, maps[book_id], settings, outcome)
        else:
            _write_question_book(out, book, summaries_of_book, hierarchy, built, maps, settings, outcome)
        report.books.append(outcome)
    _write_build_files(out, settings, backend.describe(), report)
    return report


def _read_all_books(
    sources: Sequence[str | Path],
    decoy_sources: Sequence[str | Path],
    report: NarrativeXLBuildReport,
    options: ReadOptions,
) -> tuple[list[Book], list[Book]]:
    """(the books, the decoy books); at least one book, and each id once: a book given twice is read
    once (``map_books``), and a decoy that is one of the books is left out as a decoy (the books are
    each other's other books already); both are listed in the report."""
    books = _read_books(sources, report, options)
    decoys = _read_books(decoy_sources, report, options)
    if not books:
        reasons = [reason for _, reason in [*report.excluded_books, *report.skipped_books]]
        raise LongreadError("no readable book among the sources: " + ("; ".join(reasons) or "none given"))
    ids = {book.id for book in books}
    for decoy in decoys:
        if decoy.id in ids:
            report.excluded_books.append(
                (decoy.source, f"book {decoy.id} left out as a decoy: it is among the books")
            )
    return books, [decoy for decoy in decoys if decoy.id not in ids]


def _summarise_books(
    everything: list[Book],
    decoy_ids: set[str],
    decoy_max_scenes: int | None,
    backend: Any,
    cache: GenerationCache,
    settings: NarrativeXLBuildSettings,
    show_progress: bool,
    log: Callable[[str], None],
    report: NarrativeXLBuildReport,
) -> tuple[Built, dict[str, BookOutcome]]:
    """Every book cut into scenes and summarised (a decoy book: true summaries only, no hierarchy); a book
    that cannot be cut is skipped in ``report``."""
    built: Built = {}
    outcomes: dict[str, BookOutcome] = {}
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
        outcome.failed_merges = [
            f"level {item.level} summary {item.index} (scenes {item.first_scene}–{item.last_scene}): "
            f"{item.merge_failure}"
            for item in hierarchy
            if item.merge_failure is not None
        ]
        for item in summaries:
            outcome.statuses[item.status] = outcome.statuses.get(item.status, 0) + 1
            if item.status != "OK":
                outcome.failed_scenes.append(f"{item.index}: {item.status} — {item.comment}")
        outcomes[book.id] = outcome
    return built, outcomes


def _entity_maps(built: Built, outcomes: dict[str, BookOutcome], seed: int) -> dict[str, EntityMap]:
    """Each book's characters and the names they get, found in its scenes."""
    maps: dict[str, EntityMap] = {}
    for book_id, (_, summaries_of_book, _) in built.items():
        maps[book_id] = build_entity_map(
            "".join(scene.text for scene in summaries_of_book.scenes), book_id=book_id, seed=seed
        )
        outcomes[book_id].characters = len(maps[book_id].entries)
    return maps


def _write_decoy_book(
    out: Path,
    summaries_of_book: BookSummaries,
    entity_map: EntityMap,
    settings: NarrativeXLBuildSettings,
    outcome: BookOutcome,
) -> None:
    """A decoy book's entity map and summaries (renamed when names are substituted); no questions."""
    book_id = summaries_of_book.book_id
    outcome.role = "decoys only"
    for folder in ("books", "entity_maps"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    entity_map.save(out / "entity_maps" / f"{book_id}.json")
    if settings.substitute_names:
        summaries_of_book = rename_summaries(summaries_of_book, entity_map)
    write_tagseparated(summaries_of_book, out / "books" / f"{book_id}.tagseparated")


def _write_question_book(
    out: Path,
    book: Book,
    summaries_of_book: BookSummaries,
    hierarchy: list[HierarchicalSummary],
    built: Built,
    maps: dict[str, EntityMap],
    settings: NarrativeXLBuildSettings,
    outcome: BookOutcome,
) -> None:
    """A book's read-along and correction questions (decoys drawn from the other books), renamed when
    names are substituted, written with its summaries."""
    book_id = summaries_of_book.book_id

    def adapt(text: str, from_book: str, to_book: str) -> str:
        return adapt_other_book(text, maps[from_book], maps[to_book])

    others = [other for other_id, (_, other, _) in built.items() if other_id != book_id]
    drawn = make_readalong_questions(
        summaries_of_book,
        others,
        adapt=adapt,
        rng=_rng(settings.seed, "questions", book_id),
        settings=settings.questions,
    )
    questions = list(drawn.questions)
    skipped = Counter(drawn.skipped)
    outcome.redrawn_questions = dict(drawn.redrawn)
    corrections = make_correction_questions(book_id, hierarchy, len(summaries_of_book.scenes))
    if settings.substitute_names:
        name_map = maps[book_id]
        summaries_of_book = rename_summaries(summaries_of_book, name_map)
        hierarchy = [rename_hierarchical(item, name_map) for item in hierarchy]
        questions, repeated = drop_repeated_options(
            [rename_question(question, name_map) for question in questions], SKIP_REPEATED_AFTER_RENAMING
        )
        skipped.update(repeated)
        corrections = [rename_correction(question, name_map) for question in corrections]
    outcome.skipped_questions = dict(sorted(skipped.items()))
    for question in questions:
        outcome.questions[question.question_type] = outcome.questions.get(question.question_type, 0) + 1
        outcome.none_answers += int(question.none_is_answer)
    outcome.corrections = len(corrections)
    write_book(out, summaries_of_book, hierarchy, questions, corrections, maps[book_id], book)


def _write_build_files(
    out: Path, settings: NarrativeXLBuildSettings, model: Any, report: NarrativeXLBuildReport
) -> None:
    """The settings and model the build used, and its report, beside the books."""
    atomic_write_text(
        out / BUILD_SETTINGS_FILE,
        json.dumps(
            {"settings": settings.model_dump(mode="json"), "model": model},
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


def _read_books(
    sources: Sequence[str | Path], report: NarrativeXLBuildReport, options: ReadOptions
) -> list[Book]:
    books: list[Book] = []
    for item in iter_books(list(sources), options=options):
        if isinstance(item, ExcludedBook):
            report.excluded_books.append((str(item.path or "?"), item.problem))
            continue
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
