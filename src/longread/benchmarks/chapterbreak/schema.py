"""The ChapterBreak instance: one prefix ending at a discourse boundary, the true suffix, and negatives."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

SuffixType = Literal["chapter", "cause", "dialogue"]
NegativesFrom = Literal["in-book", "out-of-book"]


class CandidateSource(BaseModel):
    """Where a candidate suffix was taken from (kept so every negative can be audited)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    book_id: str
    chapter_index: int
    char_offset: int = Field(description="offset of the candidate's start in its book's rendered text")
    char_length: int | None = Field(
        default=None,
        description="characters of its book's rendered text the kept candidate covers (its window); "
        "None in files built before windows were recorded",
    )
    heading_original: str | None = Field(
        default=None, description="the chapter heading as written, before its number was rewritten"
    )
    typography: str | None = Field(
        default=None,
        description="out-of-book negatives: what rewriting it into the gold book's typography changed "
        "in the kept text, e.g. 'double quotes straight→curly; dashes --→—' (None: nothing)",
    )


class Planted(BaseModel):
    """A calibration instance: a verbatim copy of the gold's opening planted in the prefix
    (``longread calibrate``; :mod:`longread.benchmarks.chapterbreak.planted`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    distance: int = Field(
        description="the distance asked for: tokens from the copy's start to the prefix's end"
    )
    distance_tokens: int = Field(description="the distance as planted (at a sentence boundary, ≥ distance)")
    copy_tokens: int = Field(description="tokens of the gold's opening copied (the model's tokenizer)")
    copy_chars: int
    at_char: int = Field(description="offset of the copy in the planted prefix")
    at_sentence: bool = Field(description="False: no sentence boundary lay near, the copy sits between words")
    cut_chars: int = Field(description="characters cut from the prefix's start so its token length stays")
    original_id: str
    seed: int


class ChapterBreakInstance(BaseModel):
    """One ChapterBreak example (schema version 1).

    ``prefix`` ends exactly at the boundary (for ``chapter``: where the gold
    chapter's heading starts). ``gold`` and every entry of ``negatives`` carry the
    gold's chapter number in their heading. Token counts are in ``tokenizer``'s
    tokens; the prefix count is taken from the book's own tokenisation, so it may
    differ by one token from tokenising the prefix alone.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    id: str
    split: str = Field(description="collection the book came from: pg19, ao3, gutenberg, plain, …")
    book_id: str
    book_title: str
    suffix_type: SuffixType
    negatives_from: NegativesFrom
    boundary_rule: str | None = Field(
        default=None,
        description="the rule that found the boundary: chapter-heading, cause-cue/sentence-start, "
        "cause-cue/mid-sentence, dialogue-quote (None: imported or built before the rule was recorded)",
    )
    chapter_index: int = Field(description="index of the chapter the gold suffix starts (or lies in)")
    boundary_char: int | None = Field(description="offset of the boundary in the book's rendered text")
    prefix: str
    prefix_start_char: int | None = Field(
        description="offset in the book's rendered text where the kept prefix starts"
    )
    prefix_truncated: bool | None
    prefix_tokens: int
    prefix_tokens_original: int | None
    prefix_budget: int | None
    gold: str
    negatives: list[str]
    gold_tokens: int
    negative_tokens: list[int]
    candidate_chars_original: list[int] | None = Field(
        description="characters of each candidate before cutting (gold first)"
    )
    suffix_budget: int | None
    gold_source: CandidateSource | None
    negative_sources: list[CandidateSource] | None
    chapter_number: str | None = Field(
        default=None,
        description="the gold heading's label (e.g. 'CHAPTER XII.') that every candidate carries",
    )
    tokenizer: str
    seed: int | None
    book_chapters: int | None = Field(default=None, description="chapters in the whole book")
    book_words: int | None = Field(default=None, description="words in the whole book")
    origin: str = Field(default="longread", description="'longread' or 'official:<file>' for imported sets")
    planted: Planted | None = Field(
        default=None, description="a calibration instance: where a copy of the gold was planted"
    )

    @property
    def candidates(self) -> list[str]:
        """Gold first, then the negatives in file order."""
        return [self.gold, *self.negatives]
