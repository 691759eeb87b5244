"""Everything training needs before the first step: the split, segments, encoded vectors, validation sets."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from longread.documents.book import Book
from longread.documents.reader import read_book
from longread.models.suffixlm.config import FROZEN_VARIANTS, TrainConfig
from longread.models.suffixlm.data import BookSegments, BookSplit, book_segments, list_book_files, split_books
from longread.models.suffixlm.encoder import (
    CachedEncoder,
    EmbeddingCache,
    EncoderSpec,
    SegmentEncoder,
    default_cache_dir,
)
from longread.models.suffixlm.segments import Segment, Segmenter


class RankQuestion(Protocol):
    """A ChapterBreak-style question as its builder gives it: a long prefix, the true start of what follows,
    the wrong ones."""

    @property
    def id(self) -> str: ...
    @property
    def prefix(self) -> str: ...
    @property
    def gold(self) -> str: ...
    @property
    def negatives(self) -> Sequence[str]: ...


QuestionBuilder = Callable[[Book, int, int], tuple[str, Sequence[RankQuestion]]]
"""(book, seed, prefix tokens) → (book id, its questions): how validation questions are made from a book;
the caller hands it in (ChapterBreak's builder: ``longread.benchmarks.chapterbreak.suffixlm``)."""


@dataclass
class RankItem:
    """One ChapterBreak-style question in segment form: context segments, candidates, gold first."""

    context: list[Segment]
    candidates: list[Segment]


@dataclass
class Prepared:
    split: BookSplit
    train: list[BookSegments]
    train_vectors: list[np.ndarray]
    validation: list[RankItem]
    validation_vectors: list[tuple[np.ndarray, np.ndarray]]
    encoder: SegmentEncoder
    encoded: int
    """Segments encoded now (cache misses); 0 on a second run."""


def make_encoder(config: TrainConfig) -> SegmentEncoder:
    m = config.model
    return SegmentEncoder(EncoderSpec(m.encoder, m.encoder_layers, m.pooling))


def open_cache(config: TrainConfig) -> EmbeddingCache:
    folder = Path(config.cache_dir) if config.cache_dir else default_cache_dir()
    return EmbeddingCache(folder / "segments.sqlite")


def validation_items(
    books: list[str],
    segmenter: Segmenter,
    config: TrainConfig,
    questions: QuestionBuilder,
    log: Callable[[str], None],
) -> list[RankItem]:
    """The questions ``questions`` makes of each validation book, at ``val_prefix_tokens``."""
    items: list[RankItem] = []
    for path in books:
        book_id, instances = questions(read_book(path), config.seed, config.val_prefix_tokens)
        rng = random.Random(f"suffixlm-val-{config.seed}-{book_id}")
        if len(instances) > config.val_instances_per_book:
            instances = sorted(rng.sample(instances, config.val_instances_per_book), key=lambda i: i.id)
        for instance in instances:
            context, _, _ = segmenter.context_segments(instance.prefix, config.val_prefix_tokens)
            candidates = [
                segmenter.first_segment(text, config.model.segment_tokens)[0]
                for text in [instance.gold, *instance.negatives]
            ]
            items.append(RankItem(context[-config.model.context_segments :], candidates))
        log(f"validation book {book_id}: {len(instances)} instances")
    return items


def prepare(
    config: TrainConfig,
    questions: QuestionBuilder,
    log: Callable[[str], None],
    progress: Callable[[int], None] | None = None,
) -> Prepared:
    files = list_book_files(config.books)
    split = split_books(files, train_books=config.train_books, val_books=config.val_books, seed=config.seed)
    encoder = make_encoder(config)
    segmenter = Segmenter(encoder.tokenize, config.model.segment_tokens)
    cache = open_cache(config)
    cached = CachedEncoder(encoder, cache, config.encode_batch_size)
    # A trained encoder (variants D, E) encodes every batch itself; nothing to cache.
    frozen = config.model.variant in FROZEN_VARIANTS
    train: list[BookSegments] = []
    vectors: list[np.ndarray] = []
    for path in split.train:
        segments = book_segments(read_book(path), segmenter, config.max_segments_per_book)
        if len(segments.segments) < 2:
            log(f"training book {path}: fewer than 2 segments, skipped")
            continue
        train.append(segments)
        vectors.append(cached.encode(segments.segments, progress) if frozen else np.zeros((0, encoder.dim)))
        log(
            f"training book {segments.book_id}: {len(segments.segments)} segments "
            f"(encoded so far {cached.encoded})"
        )
    items = validation_items(list(split.validation), segmenter, config, questions, log)
    val_vectors = [
        (cached.encode(item.context, progress), cached.encode(item.candidates, progress))
        if frozen
        else (empty, empty)
        for item in items
        for empty in [np.zeros((0, encoder.dim), dtype=np.float32)]
    ]
    cache.close()
    return Prepared(split, train, vectors, items, val_vectors, encoder, cached.encoded)
