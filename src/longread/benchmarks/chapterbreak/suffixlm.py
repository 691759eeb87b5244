"""SuffixLM, ChapterBreak's own segment-level model, is validated on ChapterBreak questions while it trains.

``longread train suffixlm`` hands :func:`validation_questions` to the training
(``longread.models.suffixlm.run.train_and_export``): the builder's in-book
instances of each validation book, at the training's seed and prefix length.
"""

from __future__ import annotations

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance
from longread.documents.book import Book


def validation_questions(book: Book, seed: int, prefix_tokens: int) -> tuple[str, list[ChapterBreakInstance]]:
    """(book id, the ChapterBreak instances of ``book``), built in-book with ``seed`` at ``prefix_tokens``."""
    built = build_book(book, BuildOptions(seed=seed, prefix_tokens=prefix_tokens))
    return built.book_id, built.instances
