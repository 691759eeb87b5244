"""Books → segment sequences for SuffixLM training, the book-level split and validation instances."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from longread.documents.book import Book, chapter_start
from longread.models.suffixlm.encoder import CachedEncoder
from longread.models.suffixlm.segments import Segment, Segmenter

BOOK_SUFFIXES = (".txt", ".gz", ".bz2", ".zst", ".epub", ".html", ".htm", ".jsonl")


def list_book_files(inputs: Sequence[str | Path]) -> list[Path]:
    """Book files under ``inputs`` (files or folders), sorted so a split does not depend on listing order."""
    files: set[Path] = set()
    for item in inputs:
        path = Path(item).expanduser()
        if path.is_dir():
            files.update(
                p
                for p in path.iterdir()
                if p.is_file()
                and p.name.endswith(BOOK_SUFFIXES)
                and "manifest" not in p.name
                and "truth" not in p.name
            )
        elif path.is_file():
            files.add(path)
        else:
            raise FileNotFoundError(f"{item}: no such book file or folder")
    return sorted(files, key=lambda p: p.name)


@dataclass(frozen=True)
class BookSplit:
    train: tuple[str, ...]
    validation: tuple[str, ...]
    unused: tuple[str, ...]
    """Given but not drawn (``--train-books`` smaller than what was given): never seen in training."""


def split_books(files: Sequence[Path], *, train_books: int | None, val_books: int, seed: int) -> BookSplit:
    """A seeded book-level split: validation first, then training books, the rest unused."""
    names = [str(f) for f in files]
    order = names[:]
    random.Random(f"suffixlm-split-{seed}").shuffle(order)
    if len(order) < val_books + 1:
        raise ValueError(f"{len(order)} books given; need at least {val_books + 1} (validation + training)")
    validation = order[:val_books]
    rest = order[val_books:]
    train = rest if train_books is None else rest[:train_books]
    unused = rest[len(train) :]
    return BookSplit(tuple(sorted(train)), tuple(sorted(validation)), tuple(sorted(unused)))


@dataclass
class BookSegments:
    book_id: str
    segments: list[Segment]
    chapter_starts: list[int]
    """Index of each chapter's first segment."""


def book_segments(book: Book, segmenter: Segmenter, max_segments: int | None = None) -> BookSegments:
    """Each chapter (heading + body) packed forward, so a chapter's first segment starts with its heading."""
    segments: list[Segment] = []
    starts: list[int] = []
    for chapter in book.chapters:
        chapter_segments = segmenter.segments(chapter_start(chapter))
        if not chapter_segments:
            continue
        starts.append(len(segments))
        segments.extend(chapter_segments)
        if max_segments is not None and len(segments) >= max_segments:
            break
    if max_segments is not None:
        segments = segments[:max_segments]
        starts = [s for s in starts if s < max_segments]
    return BookSegments(book.id, segments, starts)


def encode_books(
    books: Sequence[BookSegments], encoder: CachedEncoder, progress: Callable[[int], None] | None = None
) -> list[np.ndarray]:
    return [encoder.encode(b.segments, progress) for b in books]
