"""Read what a report needs from a run directory: the one results shape every task writes.

``results.json`` (layout 2) holds, per x-axis value, every metric with its 95%
interval (see :mod:`longread.evaluation.results`). Runs written by longread 0.1
(``by_prefix_length``) still load; a run whose results lack the table is
summarised again from ``samples.jsonl`` by its task.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from longread.errors import LongreadError
from longread.metrics import group_sort_key, wilson_interval
from longread.runs.layout import CONFIG_FILE, RESULTS_FILE

BASELINE_SETTINGS = {"options_only": "options only"}
"""Task settings that make a run a baseline (true in its config) and how its label names it."""


class ReportInputError(LongreadError):
    """A run directory lacks what a report needs."""


@dataclass(frozen=True)
class MetricValue:
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
    successes: int | None = None

    @property
    def is_proportion(self) -> bool:
        """Yes/no outcomes (accuracy): shown in %."""
        return self.successes is not None


@dataclass(frozen=True)
class XPoint:
    """One x-axis value of one run."""

    x: int | float | str
    n: int
    metrics: dict[str, MetricValue]
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class XAxisInfo:
    field: str
    label: str
    scale: str = "linear"


@dataclass(frozen=True)
class RunReport:
    """What the table and the plot show of one run."""

    path: Path
    label: str
    task: str
    data_path: str | None
    data_sha256: str | None
    chance: float | None
    x_axis: XAxisInfo
    primary_metric: str
    metric_levels: dict[str, str]
    points: dict[int | float | str, XPoint]
    report_extras: tuple[str, ...] = ()
    baseline: str | None = None
    """A baseline run (``"options only"``: the model saw no book), drawn dashed and named in its label."""
    overall: XPoint | None = None
    """Every metric over all samples (the table's ``all`` row when there are several x values)."""
    context_control: str | None = None
    """``shuffle`` / ``replace`` / ``none`` for a run under a context control; None when intact."""
    model: dict[str, Any] = field(default_factory=dict)
    """The model as the run's config describes it (what defines its answers)."""

    def metric(self, x: int | float | str, name: str) -> MetricValue | None:
        point = self.points.get(x)
        return None if point is None else point.metrics.get(name)


def load_run(run_dir: Path) -> RunReport:
    """A run's results, from results.json (or summarised again from samples.jsonl by its task)."""
    results = _read_json(run_dir / RESULTS_FILE, required=True)
    config = _read_json(run_dir / CONFIG_FILE, required=False).get("config", {})
    model = config.get("model", {}) if isinstance(config.get("model"), Mapping) else {}
    data = config.get("data", {}) if isinstance(config.get("data"), Mapping) else {}
    task = str(results.get("task") or config.get("task") or "?")
    if not isinstance(results.get("by_x"), Mapping) and not isinstance(
        results.get("by_prefix_length"), Mapping
    ):
        results = {**_summarise_again(run_dir, task, model), **results}
    label = str(results.get("model") or model.get("name") or model.get("id") or run_dir.name)
    settings = config.get("settings", {}) if isinstance(config.get("settings"), Mapping) else {}
    baseline = BASELINE_SETTINGS.get(next((key for key in BASELINE_SETTINGS if settings.get(key)), ""))
    if baseline:
        label = f"{label} ({baseline})"
    control = settings.get("context_control")
    if control and control != "intact":
        label = f"{label} ({control}, last {settings.get('keep_last', 0)} kept)"
    if model.get("press"):  # a run under a KV-cache press (its identity holds the press)
        label = f"{label} (press {model['press']})"
    chance = results.get("chance")
    common = {
        "path": run_dir,
        "label": label,
        "task": task,
        "data_path": data.get("path"),
        "data_sha256": data.get("sha256"),
        "chance": float(chance) if isinstance(chance, int | float) else None,
        "baseline": baseline,
        "context_control": str(control) if control and control != "intact" else None,
        "model": dict(model),
    }
    if isinstance(results.get("by_x"), Mapping):
        return _from_layout_2(run_dir, results, common)
    return _from_layout_1(run_dir, results["by_prefix_length"], common)


def load_runs(run_dirs: Sequence[Path]) -> list[RunReport]:
    """Load several runs; runs of the same model get their directory name added to their label."""
    runs = [load_run(Path(path)) for path in run_dirs]
    labels = [run.label for run in runs]
    return [
        replace(run, label=f"{run.label} ({run.path.name})") if labels.count(run.label) > 1 else run
        for run in runs
    ]


def _from_layout_2(run_dir: Path, results: Mapping[str, Any], common: dict[str, Any]) -> RunReport:
    axis = results.get("x_axis") if isinstance(results.get("x_axis"), Mapping) else {}
    assert isinstance(axis, Mapping)
    metric_meta = results.get("metrics") if isinstance(results.get("metrics"), Mapping) else {}
    assert isinstance(metric_meta, Mapping)
    points: dict[int | float | str, XPoint] = {}
    for key, entry in results["by_x"].items():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("metrics"), Mapping):
            raise ReportInputError(f"{run_dir / RESULTS_FILE}: by_x[{key!r}] has no metrics")
        x = entry.get("x", key)
        points[x] = XPoint(
            x=x,
            n=int(entry.get("n", 0)),
            metrics={name: _metric(run_dir, key, name, value) for name, value in entry["metrics"].items()},
            extras=dict(entry.get("extras") or {}),
        )
    primary = str(results.get("primary_metric") or next(iter(metric_meta), "accuracy"))
    overall_entry = results.get("overall")
    overall = None
    if isinstance(overall_entry, Mapping) and isinstance(overall_entry.get("metrics"), Mapping):
        overall = XPoint(
            x="all",
            n=int(overall_entry.get("n", 0)),
            metrics={
                name: _metric(run_dir, "overall", name, value)
                for name, value in overall_entry["metrics"].items()
            },
        )
    return RunReport(
        **common,
        overall=overall,
        x_axis=XAxisInfo(
            field=str(axis.get("field", "x")),
            label=str(axis.get("label", "x")),
            scale=str(axis.get("scale", "linear")),
        ),
        primary_metric=primary,
        metric_levels={name: str(meta.get("level", "sample")) for name, meta in metric_meta.items()},
        points=dict(sorted(points.items(), key=lambda item: group_sort_key(item[0]))),
        report_extras=_report_extras(common["task"]),
    )


def _from_layout_1(run_dir: Path, table: Mapping[str, Any], common: dict[str, Any]) -> RunReport:
    """longread 0.1's ChapterBreak results: ``by_prefix_length`` with flat accuracy fields."""
    points: dict[int | float | str, XPoint] = {}
    for key, entry in table.items():
        try:
            length = int(str(key))
        except ValueError:
            raise ReportInputError(
                f"{run_dir / RESULTS_FILE}: by_prefix_length key {key!r} is not a number of tokens"
            ) from None
        if not isinstance(entry, Mapping):
            raise ReportInputError(f"{run_dir / RESULTS_FILE}: by_prefix_length[{key!r}] is not an object")
        n = int(entry.get("n", 0))
        correct, accuracy = entry.get("correct"), entry.get("accuracy")
        if correct is None and accuracy is None:
            raise ReportInputError(
                f"{run_dir / RESULTS_FILE}: by_prefix_length[{key!r}] has neither correct nor accuracy"
            )
        if correct is None:
            correct = round(float(accuracy or 0.0) * n)
        low, high = entry.get("ci_low"), entry.get("ci_high")
        if low is None or high is None:
            low, high = wilson_interval(int(correct), n)
        perplexity = entry.get("word_perplexity")
        points[length] = XPoint(
            x=length,
            n=n,
            metrics={
                "accuracy": MetricValue(correct / n if n else math.nan, low, high, n, int(correct)),
                "word_perplexity": MetricValue(perplexity if isinstance(perplexity, int | float) else None),
            },
            extras={
                k: v for k, v in entry.items() if k not in {"n", "correct", "accuracy", "ci_low", "ci_high"}
            },
        )
    return RunReport(
        **common,
        x_axis=XAxisInfo("prefix_length", "prefix length (tokens)", "log2"),
        primary_metric="accuracy",
        metric_levels={"accuracy": "sample", "word_perplexity": "corpus"},
        points=dict(sorted(points.items())),
        report_extras=("truncated_prefix",),
    )


def _metric(run_dir: Path, key: object, name: str, value: object) -> MetricValue:
    if not isinstance(value, Mapping):
        raise ReportInputError(f"{run_dir / RESULTS_FILE}: by_x[{key!r}].metrics.{name} is not an object")

    def number(field_name: str) -> float | None:
        item = value.get(field_name)
        return float(item) if isinstance(item, int | float) and not isinstance(item, bool) else None

    successes = value.get("successes")
    return MetricValue(
        value=number("value"),
        ci_low=number("ci_low"),
        ci_high=number("ci_high"),
        n=int(value.get("n") or 0),
        successes=int(successes) if isinstance(successes, int) else None,
    )


def _report_extras(task: str) -> tuple[str, ...]:
    try:
        from longread.evaluation.registry import task_class

        return tuple(task_class(task).report_extras)
    except LongreadError:
        return ()


def _summarise_again(run_dir: Path, task: str, model: Mapping[str, Any]) -> dict[str, Any]:
    """results.json without a table (an interrupted or hand-made run): the task summarises the rows."""
    from longread.evaluation.registry import make_task
    from longread.evaluation.results import summarise_rows
    from longread.evaluation.rows import read_typed_rows

    try:
        chosen = make_task(task)
    except LongreadError:
        raise ReportInputError(
            f"{run_dir / RESULTS_FILE}: has no by_x table and its task {task!r} is not registered, so "
            "samples.jsonl cannot be summarised — rerun the evaluation with --resume"
        ) from None
    rows = read_typed_rows(run_dir, chosen.row_model)
    if not rows:
        raise ReportInputError(
            f"{run_dir}: results.json has no by_x table and samples.jsonl no rows — "
            "rerun the evaluation with --resume to write the results"
        )
    return summarise_rows(chosen, rows, str(model.get("name", "model")))


def _read_json(path: Path, *, required: bool) -> dict[str, Any]:
    if not path.exists():
        if required:
            raise ReportInputError(f"{path}: not found — is this a finished run directory?")
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportInputError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ReportInputError(f"{path}: expected a JSON object")
    return value
