"""Real ChapterBreak instances from the bundled novels, small enough for a calibration in a test."""

from __future__ import annotations

from pathlib import Path

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.io import write_instances
from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance
from longread.documents.reader import read_book

BOOKS = Path(__file__).resolve().parents[2] / "src" / "longread" / "data" / "books"


def bundled_instances(
    per_book: int, books: tuple[str, ...] = ("pg84", "pg1342", "pg120", "pg161", "pg2852")
) -> list[ChapterBreakInstance]:
    """``per_book`` instances of each bundled book (from its third chapter break on), 512-token prefixes."""
    instances: list[ChapterBreakInstance] = []
    for name in books:
        built = build_book(read_book(BOOKS / f"{name}.txt.gz"), BuildOptions(prefix_tokens=512)).instances
        instances += built[2 : 2 + per_book]
    return instances


def write_bundled(path: Path, per_book: int) -> Path:
    write_instances(bundled_instances(per_book), path)
    return path
