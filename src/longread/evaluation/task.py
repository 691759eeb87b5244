"""What a benchmark gives the runner: its samples, the request for each, a typed row per result, metrics.

A task never calls a model. It turns instances into *samples* (one question of
one instance at one x-axis value: a prefix length, a reading position, a
document-length bucket …), a sample into a *request* of a kind some backend
answers, and the backend's *result* into a typed *row*. The runner
(:mod:`longread.evaluation.runner`) owns everything else: keys, resume, errors,
batching, progress, reuse, results.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

ROW_SCHEMA_VERSION = 1


class SampleRow(BaseModel):
    """One finished sample as stored in ``samples.jsonl``; every task's row type extends this.

    ``key`` is unique in a run; ``reused`` says the result was taken from another
    sample of the same instance whose context was not cut (so it is the same
    request). Unknown fields are kept, so rows written by a newer longread still read.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    schema_version: int = ROW_SCHEMA_VERSION
    key: str


InstanceT = TypeVar("InstanceT")
RowT = TypeVar("RowT", bound=SampleRow)
XValue = int | float | str


@dataclass(frozen=True)
class Sample(Generic[InstanceT]):
    """One scored unit: an instance at one x-axis value.

    Samples of one instance with the same ``reuse_group`` differ only in how much
    context they may read (``context_budget``): once a result shows its context
    was not cut, the runner reuses it for the larger budgets instead of asking the
    model the same question again. ``reuse_group=None`` never reuses.
    """

    key: str
    instance_id: str
    instance: InstanceT
    x: XValue
    group: str = ""
    """What stratified sampling spreads over (a book id); also shown in errors."""
    context_budget: int | None = None
    reuse_group: str | None = None
    pair_id: str | None = None
    """Equal for the instances of two variants of one item (ChapterBreak: the same boundary of a book with
    in-book or out-of-book negatives), so runs can be compared pair by pair; None: the instance id."""


@dataclass(frozen=True)
class XAxis:
    """The memory-curve axis: which row field it is and how to draw it."""

    field: str
    label: str
    scale: Literal["log2", "linear", "category"] = "linear"


@dataclass(frozen=True)
class Metric:
    """A metric with its level.

    Sample-level metrics give one value per row (a bool for accuracy-like
    metrics, which get Wilson intervals; a float otherwise, averaged with a
    bootstrap interval). Corpus-level metrics (BLEU, pooled perplexity) are
    computed over all rows of a group at once, with a bootstrap interval over rows.
    """

    name: str
    level: Literal["sample", "corpus"]
    higher_is_better: bool = True
    sample_value: Callable[[Any], float | bool | None] | None = None
    corpus_value: Callable[[Sequence[Any]], float | None] | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if self.level == "sample" and self.sample_value is None:
            raise ValueError(f"sample-level metric {self.name!r} needs sample_value")
        if self.level == "corpus" and self.corpus_value is None:
            raise ValueError(f"corpus-level metric {self.name!r} needs corpus_value")


class TaskSettings(BaseModel):
    """A task's own settings (result-defining: they go into the run's config hash)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


SettingsT = TypeVar("SettingsT", bound=TaskSettings)


class Task(Protocol[InstanceT, RowT]):
    """A benchmark as the runner sees it (example: ``benchmarks.chapterbreak.task.ChapterBreakTask``).

    A task may also declare its export: a class attribute ``exporter = "module:function"`` naming the
    maker of its items for ``longread export`` (:mod:`longread.exportable`, imported when first used);
    a task without one is not exported."""

    name: ClassVar[str]
    description: ClassVar[str]
    settings_model: ClassVar[type[TaskSettings]]
    row_model: ClassVar[type[SampleRow]]
    request_kinds: ClassVar[tuple[str, ...]]
    """Backend capabilities this task can use, preferred first (``loglikelihood``, ``rank`` …)."""
    x_axis: ClassVar[XAxis]
    primary_metric: ClassVar[str]
    report_extras: ClassVar[tuple[str, ...]]
    """Keys of :meth:`group_extras` that the report table shows as columns."""

    @property
    def settings(self) -> TaskSettings: ...

    def load(self, data: Path) -> list[InstanceT]: ...

    def samples(self, instance: InstanceT) -> list[Sample[InstanceT]]: ...

    def request(self, sample: Sample[InstanceT], kind: str) -> Any: ...

    def row(self, sample: Sample[InstanceT], result: Any, kind: str, *, reused: bool) -> RowT: ...

    def metrics(self) -> tuple[Metric, ...]: ...

    def chance(self, rows: Sequence[RowT]) -> float | None: ...

    def group_extras(self, rows: Sequence[RowT]) -> dict[str, Any]:
        """Task-specific counts for one x value (ties, truncated prefixes …), shown beside the metrics."""
        ...

    def notes(self) -> dict[str, str]: ...


@dataclass(frozen=True)
class TaskInfo:
    """What ``longread tasks`` lists."""

    name: str
    description: str
    request_kinds: tuple[str, ...]
    x_axis: str
    settings: Mapping[str, Any] = field(default_factory=dict)
