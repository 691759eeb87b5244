"""ChapterBreak as a task of the generic runner: instance × prefix length → scores of six candidates.

For each instance and prefix length L, one request holds the prefix (cut from
the left to L tokens of the model's own tokenizer) and the candidates (cut from
the right to the suffix budget). A language model reads the prefix once and
gives each candidate its log-probability; a ranker (SuffixLM) reads L tokens of
prefix as segments and gives each candidate a score. The prediction is the
candidate with the highest value; a tie with the gold counts as wrong (the
official SuffixLM code counts ties as correct — ``tie`` is recorded on every row
so either rule can be recomputed).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import field_validator

from longread.benchmarks.chapterbreak.exported import load_exported
from longread.benchmarks.chapterbreak.io import load_instances
from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance
from longread.evaluation.exported import is_export
from longread.evaluation.task import Metric, Sample, SampleRow, TaskSettings, XAxis
from longread.metrics import pooled_word_perplexity
from longread.models.requests import (
    LOGLIKELIHOOD,
    RANK,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    RankRequest,
    RankResult,
)

TASK = "chapterbreak"
DEFAULT_PREFIX_LENGTHS = (256, 512, 1024, 2048, 4096, 8192)
TIE_RULE: Literal["a tie between the gold and a negative counts as wrong"] = (
    "a tie between the gold and a negative counts as wrong"
)


class ChapterBreakSettings(TaskSettings):
    prefix_lengths: tuple[int, ...] = DEFAULT_PREFIX_LENGTHS
    """Prefix lengths in the model's own tokens (a ranker: its encoder's tokens)."""
    suffix_tokens: int = 128
    """Each candidate is cut to its first N tokens."""
    truncate: bool = True
    """False: a prompt longer than the model window is a per-sample error, not cut."""
    tie_rule: Literal["a tie between the gold and a negative counts as wrong"] = TIE_RULE

    @field_validator("prefix_lengths")
    @classmethod
    def _positive_sorted(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if not value or min(value) < 1:
            raise ValueError("give at least one positive prefix length")
        return tuple(sorted(set(value)))

    @field_validator("suffix_tokens")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError("suffix_tokens must be at least 1")
        return value


class ChapterBreakRow(SampleRow):
    """One instance at one prefix length (row layout of longread 0.1, plus ``score_kind``/``scores``)."""

    id: str
    book_id: str
    split: str
    suffix_type: str
    negatives_from: str | None = None
    """in-book or out-of-book (rows written before longread 0.2 lack it)."""
    prefix_length: int
    score_kind: Literal["logprob", "rank"] = "logprob"
    logprobs: list[float] | None = None
    """Language models: each candidate's log-probability (nats), gold first."""
    scores: list[float] | None = None
    """Rankers: each candidate's score (not a probability), gold first."""
    prediction: int
    correct: bool
    tie: bool
    continuation_tokens: list[int]
    continuation_tokens_original: list[int]
    is_greedy: list[bool] | None = None
    context_tokens_original: int
    context_tokens_kept: int
    context_truncated: bool
    gold_logprob: float | None = None
    gold_words: int | None = None
    reused_shorter_length: bool = False
    pair_id: str | None = None
    """The boundary the instance ends at, equal for its in-book and out-of-book variants (``pair_id``);
    rows written before it was recorded lack it."""

    @property
    def candidate_scores(self) -> list[float]:
        values = self.logprobs if self.score_kind == "logprob" else self.scores
        return list(values or [])


def sample_key(instance_id: str, prefix_length: int) -> str:
    return f"{instance_id}@{prefix_length:05d}"


def pair_id(instance: ChapterBreakInstance) -> str:
    """The boundary an instance ends at, the same whatever its negatives: ``SPLIT/BOOK/chapter-I`` for a
    chapter break (I: the gold chapter's index), ``SPLIT/BOOK/char-C`` for a cause or dialogue boundary
    (C: its offset in the book's rendered text). Two runs over the in-book and out-of-book variants of
    one build are compared instance by instance on it (``longread report A B``)."""
    where = f"{instance.split}/{instance.book_id}"
    if instance.suffix_type == "chapter":
        return f"{where}/chapter-{instance.chapter_index}"
    if instance.boundary_char is not None:
        return f"{where}/char-{instance.boundary_char}"
    return instance.id  # imported without offsets: only the instance itself


def judge(values: Sequence[float]) -> tuple[int, bool, bool]:
    """(prediction, correct, tie) for candidate values with the gold first; a tie for first is wrong."""
    best = max(values)
    gold = values[0]
    tie = gold == best and sum(1 for value in values if value == best) > 1
    return list(values).index(best), gold == best and not tie, tie


def _cut_candidates(row: ChapterBreakRow) -> int:
    pairs = zip(row.continuation_tokens, row.continuation_tokens_original, strict=True)
    return sum(1 for kept, whole in pairs if kept < whole)


def _word_perplexity(rows: Sequence[ChapterBreakRow]) -> float | None:
    scored = [row for row in rows if row.gold_logprob is not None and row.gold_words]
    if not scored:
        return None
    return pooled_word_perplexity(
        [row.gold_logprob for row in scored if row.gold_logprob is not None],
        [row.gold_words for row in scored if row.gold_words],
    )


class ChapterBreakTask:
    name: ClassVar[str] = TASK
    description: ClassVar[str] = (
        "pick the true next-chapter opening among hard negatives, at several prefix lengths (accuracy)"
    )
    settings_model: ClassVar[type[TaskSettings]] = ChapterBreakSettings
    row_model: ClassVar[type[SampleRow]] = ChapterBreakRow
    request_kinds: ClassVar[tuple[str, ...]] = (LOGLIKELIHOOD, RANK)
    x_axis: ClassVar[XAxis] = XAxis("prefix_length", "prefix length (tokens)", "log2")
    primary_metric: ClassVar[str] = "accuracy"
    report_extras: ClassVar[tuple[str, ...]] = ("truncated_prefix",)
    exporter: ClassVar[str] = "longread.benchmarks.chapterbreak.export:export_items"
    """``longread export chapterbreak`` (:mod:`longread.exportable`)."""

    def __init__(self, settings: TaskSettings | None = None) -> None:
        chosen = settings if settings is not None else ChapterBreakSettings()
        assert isinstance(chosen, ChapterBreakSettings)
        self._settings = chosen

    @property
    def settings(self) -> ChapterBreakSettings:
        return self._settings

    def load(self, data: Path) -> list[ChapterBreakInstance]:
        """A longread JSONL file, or a ``longread export chapterbreak --to hf`` folder."""
        if is_export(Path(data)):
            return load_exported(Path(data))
        return load_instances(data)

    def samples(self, instance: ChapterBreakInstance) -> list[Sample[ChapterBreakInstance]]:
        return [
            Sample(
                key=sample_key(instance.id, length),
                instance_id=instance.id,
                instance=instance,
                x=length,
                group=instance.book_id,
                context_budget=length,
                reuse_group="prefix",
                pair_id=pair_id(instance),
            )
            for length in self._settings.prefix_lengths
        ]

    def control_document(self, instance: ChapterBreakInstance) -> tuple[str, str, str]:
        """(book, instance, prefix): what a context control perturbs, and whose other books lend tokens."""
        return instance.book_id, instance.id, instance.prefix

    def control_books(self, sample: Sample[ChapterBreakInstance]) -> set[str]:
        """The books the sample's candidates come from: ``replace`` never borrows from them (a donor
        span from a negative's book would make that negative look like the continuation)."""
        instance = sample.instance
        sources = [instance.gold_source, *(instance.negative_sources or [])]
        return {instance.book_id, *(source.book_id for source in sources if source is not None)}

    def request(self, sample: Sample[ChapterBreakInstance], kind: str) -> LoglikelihoodRequest | RankRequest:
        instance = sample.instance
        if kind == RANK:
            return RankRequest(
                context=instance.prefix,
                candidates=tuple(instance.candidates),
                max_context_tokens=sample.context_budget,
                max_candidate_tokens=self._settings.suffix_tokens,
            )
        return LoglikelihoodRequest(
            context=instance.prefix,
            continuations=tuple(instance.candidates),
            max_context_tokens=sample.context_budget,
            max_continuation_tokens=self._settings.suffix_tokens,
            truncate=self._settings.truncate,
        )

    def row(
        self, sample: Sample[ChapterBreakInstance], result: Any, kind: str, *, reused: bool
    ) -> ChapterBreakRow:
        instance = sample.instance
        common: dict[str, Any] = {
            "key": sample.key,
            "id": instance.id,
            "book_id": instance.book_id,
            "split": instance.split,
            "suffix_type": instance.suffix_type,
            "negatives_from": instance.negatives_from,
            "prefix_length": int(sample.x),
            "context_tokens_original": result.context_tokens_original,
            "context_tokens_kept": result.context_tokens_kept,
            "context_truncated": result.context_tokens_kept < result.context_tokens_original,
            "reused_shorter_length": reused,
            "pair_id": sample.pair_id,
        }
        if isinstance(result, RankResult):
            prediction, correct, tie = judge(result.scores)
            return ChapterBreakRow(
                **common,
                score_kind="rank",
                scores=list(result.scores),
                prediction=prediction,
                correct=correct,
                tie=tie,
                continuation_tokens=list(result.candidate_tokens),
                continuation_tokens_original=list(result.candidate_tokens_original),
            )
        if not isinstance(result, LoglikelihoodResult):
            raise TypeError(f"chapterbreak cannot read a {type(result).__name__}")
        logprobs = [score.logprob for score in result.scores]
        prediction, correct, tie = judge(logprobs)
        gold = result.scores[0]
        return ChapterBreakRow(
            **common,
            logprobs=logprobs,
            prediction=prediction,
            correct=correct,
            tie=tie,
            continuation_tokens=[score.n_tokens for score in result.scores],
            continuation_tokens_original=[score.n_tokens_original for score in result.scores],
            is_greedy=[score.is_greedy for score in result.scores],
            gold_logprob=gold.logprob,
            gold_words=len(gold.scored_text.split()),
        )

    def metrics(self) -> tuple[Metric, ...]:
        return (
            Metric(
                "accuracy",
                "sample",
                sample_value=lambda row: bool(row.correct),
                description="the gold has the highest score (a tie for first counts as wrong)",
            ),
            Metric(
                "word_perplexity",
                "corpus",
                higher_is_better=False,
                corpus_value=_word_perplexity,
                description="exp(-sum of gold log-probs / sum of gold words), words = whitespace-separated "
                "words of the scored (kept) gold text; language models only",
            ),
        )

    def chance(self, rows: Sequence[ChapterBreakRow]) -> float | None:
        counts = {len(row.continuation_tokens) for row in rows}
        return 1.0 / counts.pop() if len(counts) == 1 else None

    def group_extras(self, rows: Sequence[ChapterBreakRow]) -> dict[str, Any]:
        length = rows[0].prefix_length if rows else 0
        return {
            "ties": sum(1 for row in rows if row.tie),
            "truncated_prefix": sum(1 for row in rows if row.context_truncated),
            "mean_context_tokens": sum(row.context_tokens_kept for row in rows) / len(rows) if rows else None,
            "short_prefix": sum(1 for row in rows if row.context_tokens_original < length),
            "truncated_candidates": sum(_cut_candidates(row) for row in rows),
            "reused": sum(1 for row in rows if row.reused_shorter_length),
        }  # fmt: skip

    def notes(self) -> dict[str, str]:
        return {
            "tie_rule": TIE_RULE,
            "short_prefix": "samples whose whole prefix had fewer tokens than the prefix length",
            "truncated_prefix": "samples whose prefix was cut from the left to the prefix length",
            "reused": "samples answered by a shorter length's result that already held the whole prefix",
        }
