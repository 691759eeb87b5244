"""Read what a report needs from a run directory, tolerant of keys it does not know."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from longread.errors import LongreadError
from longread.metrics import AccuracySummary, accuracy_by, wilson_interval
from longread.runs.run_dir import CONFIG_FILE, RESULTS_FILE, read_samples


class ReportInputError(LongreadError):
    """A run directory lacks what a report needs."""


class PrefixLengthResult(BaseModel):
    """One prefix length of one run; ``accuracy`` and the CI are fractions (0–1)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    n: int
    correct: int | None = None
    accuracy: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    word_perplexity: float | None = None
    truncated_prefix: int | None = None


@dataclass(frozen=True)
class RunReport:
    """What the table and the plot show of one run."""

    path: Path
    label: str
    task: str
    data_path: str | None
    data_sha256: str | None
    chance: float | None
    by_prefix_length: dict[int, PrefixLengthResult]


def load_run(run_dir: Path) -> RunReport:
    """A run's results (from results.json, or computed from samples.jsonl when it has no per-length table)."""
    results = _read_json(run_dir / RESULTS_FILE, required=True)
    config = _read_json(run_dir / CONFIG_FILE, required=False).get("config", {})
    model = config.get("model", {}) if isinstance(config.get("model"), Mapping) else {}
    data = config.get("data", {}) if isinstance(config.get("data"), Mapping) else {}
    label = str(results.get("model") or model.get("name") or model.get("id") or run_dir.name)
    table = results.get("by_prefix_length")
    if isinstance(table, Mapping) and table:
        by_length = {
            _prefix_length(run_dir, key): _parse_result(run_dir, key, value) for key, value in table.items()
        }
    else:
        by_length = _from_rows(run_dir)
    chance = results.get("chance")
    return RunReport(
        path=run_dir,
        label=label,
        task=str(results.get("task") or config.get("task") or "?"),
        data_path=data.get("path"),
        data_sha256=data.get("sha256"),
        chance=float(chance) if isinstance(chance, int | float) else None,
        by_prefix_length=dict(sorted(by_length.items())),
    )


def load_runs(run_dirs: Sequence[Path]) -> list[RunReport]:
    """Load several runs; runs of the same model get their directory name added to their label."""
    runs = [load_run(Path(path)) for path in run_dirs]
    labels = [run.label for run in runs]
    return [
        replace(run, label=f"{run.label} ({run.path.name})") if labels.count(run.label) > 1 else run
        for run in runs
    ]


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


def _prefix_length(run_dir: Path, key: object) -> int:
    try:
        return int(str(key))
    except ValueError:
        raise ReportInputError(
            f"{run_dir / RESULTS_FILE}: by_prefix_length key {key!r} is not a number of tokens"
        ) from None


def _parse_result(run_dir: Path, key: object, value: object) -> PrefixLengthResult:
    try:
        result = PrefixLengthResult.model_validate(value)
    except ValidationError as exc:
        raise ReportInputError(
            f"{run_dir / RESULTS_FILE}: by_prefix_length[{key!r}] is not usable ({exc.errors()[0]['msg']})"
        ) from None
    return _complete(run_dir, key, result)


def _complete(run_dir: Path, key: object, result: PrefixLengthResult) -> PrefixLengthResult:
    """Fill in accuracy and the Wilson interval from the counts when results.json left them out."""
    correct, accuracy = result.correct, result.accuracy
    if correct is None and accuracy is None:
        raise ReportInputError(
            f"{run_dir / RESULTS_FILE}: by_prefix_length[{key!r}] has neither correct nor accuracy"
        )
    if correct is None:
        assert accuracy is not None
        correct = round(accuracy * result.n)
    if accuracy is None:
        accuracy = correct / result.n if result.n else math.nan
    low, high = result.ci_low, result.ci_high
    if low is None or high is None:
        low, high = wilson_interval(correct, result.n)
    return result.model_copy(
        update={"correct": correct, "accuracy": accuracy, "ci_low": low, "ci_high": high}
    )


def _from_rows(run_dir: Path) -> dict[int, PrefixLengthResult]:
    rows = read_samples(run_dir)
    usable = [row for row in rows if isinstance(row.get("prefix_length"), int) and "correct" in row]
    if not usable:
        raise ReportInputError(
            f"{run_dir}: results.json has no by_prefix_length and samples.jsonl no rows with "
            "prefix_length and correct — rerun the evaluation with --resume to write the results"
        )
    by_length: dict[Any, AccuracySummary] = accuracy_by(usable, "prefix_length")
    return {int(length): PrefixLengthResult.model_validate(s.as_dict()) for length, s in by_length.items()}
