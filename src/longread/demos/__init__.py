"""The bundled demos: ChapterBreak from the shipped books and NarrativeXL from one novel."""

from __future__ import annotations

from longread.demos.chapterbreak import (
    DEMO_MODELS,
    run_demo,
)
from longread.demos.narrativexl import (
    run_narrativexl_demo,
)
from longread.documents.bundled import bundled_books

__all__ = [
    "DEMO_MODELS",
    "bundled_books",
    "run_demo",
    "run_narrativexl_demo",
]
