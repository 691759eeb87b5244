"""Real ChapterBreak instances from the bundled novels, small enough for a calibration in a test."""

from __future__ import annotations

from pathlib import Path

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.io import write_instances
from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance
from longread.documents.reader import read_book

BOOKS = Path(__file__).resolve().parents[2] / "src" / "longread" / "data" / "books"


def bundled_instances(
    per_book: int,
    books: tuple[str, ...] = ("pg84", "pg1342", "pg120", "pg161", "pg2852"),
    negatives: int = 5,
) -> list[ChapterBreakInstance]:
    """``per_book`` instances of each bundled book (from its third chapter break on), 512-token prefixes."""
    instances: list[ChapterBreakInstance] = []
    options = BuildOptions(prefix_tokens=512, negatives=negatives)
    for name in books:
        built = build_book(read_book(BOOKS / f"{name}.txt.gz"), options).instances
        instances += built[2 : 2 + per_book]
    return instances


def write_bundled(path: Path, per_book: int, negatives: int = 3) -> Path:
    """The instances as a data file; 3 negatives (not the authors' 5): a planted copy's effect shows as well
    against 3, and every run of a test scores a third fewer candidates."""
    write_instances(bundled_instances(per_book, negatives=negatives), path)
    return path
