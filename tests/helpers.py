"""Shared test helpers: where the shared corpus is, and small synthetic books."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from longread.documents.book import Book, Chapter

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
GUTENBERG = SHARED / "corpus" / "gutenberg"

needs_shared = pytest.mark.skipif(
    not GUTENBERG.is_dir(), reason=f"the shared corpus is not at {GUTENBERG} (CI always has it)"
)


def gutenberg_book(book_id: int) -> Path:
    return GUTENBERG / f"pg{book_id}.txt.gz"


def synthetic_book(n_chapters: int, *, book_id: str = "synthetic", style: str = "CHAPTER {roman}.") -> Book:
    from longread.documents.headings import format_number

    chapters = []
    for index in range(1, n_chapters + 1):
        heading = style.format(roman=format_number(index, "roman-upper"), arabic=index)
        body = "\n\n".join(
            f"Paragraph {p} of chapter {index}. It rained; the ship sailed on and on past the harbour."
            for p in range(1, 30)
        )
        chapters.append(Chapter(heading=heading, text=body))
    return Book(
        id=book_id,
        title=f"Book {book_id}",
        author="Anon",
        language="en",
        source="<synthetic>",
        chapters=tuple(chapters),
        metadata={"collection": "pg19"},
    )


VLSP = SHARED / "corpus" / "vlsp"


def copy_theses(folder: Path, theses: Sequence[str]) -> Path:
    """The named real VLSP theses (main text and abstracts) copied into ``folder``: a builder's source."""
    folder.mkdir(parents=True, exist_ok=True)
    for thesis in theses:
        files = sorted(VLSP.glob(f"{thesis}.*"))
        assert files, f"no thesis {thesis} in {VLSP}"
        for path in files:
            shutil.copy(path, folder / path.name)
    return folder
