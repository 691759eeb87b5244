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

from longread.benchmarks.narrativexl.build.pipeline import (
    BUILD_SETTINGS_FILE,
    CACHE_DIR,
    NarrativeXLBuildSettings,
    build_narrativexl,
)
from longread.benchmarks.narrativexl.build.report import (
    BUILD_REPORT_FILE,
    BookOutcome,
    NarrativeXLBuildReport,
)

__all__ = [
    "BUILD_REPORT_FILE",
    "BUILD_SETTINGS_FILE",
    "CACHE_DIR",
    "BookOutcome",
    "NarrativeXLBuildReport",
    "NarrativeXLBuildSettings",
    "build_narrativexl",
]
