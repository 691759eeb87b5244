"""What a campaign cost: per model × L, the runs it made, the samples and tokens they scored and the wall
time they took, summed over every session of every run (their ``timing.json``).

It is written to ``cost.json`` beside the page and printed at the end, never into ``horizon.json`` or
``horizon.md``: it depends on the machine, its load and the thread count, which define no number of the
answer (a campaign on Ray writes the one-process page to the byte, and another cost).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from longread.files import atomic_write_text
from longread.progress import format_duration
from longread.runs.layout import RESULTS_FILE

COST = "cost.json"


@dataclass
class Spent:
    model: str
    length: int
    runs: int = 0
    samples: int = 0
    tokens: int = 0
    seconds: float = 0.0
    threads: list[str] = field(default_factory=list)
    """The thread counts its sessions ran with (``runtime.backend.threads``), each once."""
    untimed: list[str] = field(default_factory=list)
    """Runs whose ``timing.json`` could not be read (counted in no sum; named in the lines)."""

    @property
    def rate(self) -> float | None:
        return self.tokens / self.seconds if self.seconds > 0 else None


def campaign_cost(
    out: Path, runs: Sequence[Path], models: Sequence[str], lengths: Sequence[int]
) -> list[Spent]:
    """Per model × L (in the campaign's order) what its runs under ``out`` spent."""
    from longread.horizon.layout import length_dir

    spent = {(model, length): Spent(model, length) for model in models for length in lengths}
    for run in runs:
        for (model, length), entry in spent.items():
            if run.is_relative_to(length_dir(out, model, length)):
                _add(entry, run / "timing.json")
                break
    return list(spent.values())


def runs_on_disk(out: Path, models: Sequence[str], lengths: Sequence[int]) -> list[Path]:
    """The run folders (those with a ``timing.json``) already under ``out`` for these models × L, in path
    order: what a campaign resumed there replays rather than scores again."""
    from longread.horizon.layout import length_dir

    found: set[Path] = set()
    for model in models:
        for length in lengths:
            found.update(timing.parent for timing in length_dir(out, model, length).glob("**/timing.json"))
    return sorted(found)


def on_disk_lines(out: Path, models: Sequence[str], lengths: Sequence[int]) -> list[str]:
    """What the runs already under ``out`` scored, one line per model × L that has any (none: no line),
    with how many of them have no results yet (interrupted, or running in another process)."""
    from longread.horizon.layout import length_dir

    runs = runs_on_disk(out, models, lengths)
    spent = campaign_cost(out, runs, models, lengths)
    lines = []
    for entry, line in zip(spent, cost_lines(spent)[:-1], strict=True):
        if not entry.runs:
            continue
        here = length_dir(out, entry.model, entry.length)
        open_runs = sum(1 for run in runs if run.is_relative_to(here) and not (run / RESULTS_FILE).exists())
        lines.append(line + (f"; {open_runs} of them not finished" if open_runs else ""))
    return lines


def _add(entry: Spent, timing: Path) -> None:
    entry.runs += 1
    try:
        record: dict[str, Any] = json.loads(timing.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        entry.untimed.append(f"{timing.parent} ({exc})")
        return
    for session in record.get("sessions", []):
        entry.samples += int(session.get("samples") or 0)
        entry.tokens += int(session.get("tokens") or 0)
        entry.seconds += float(session.get("wall_time_s") or 0.0)
        threads = str(((session.get("runtime") or {}).get("backend") or {}).get("threads", "?"))
        if threads not in entry.threads:
            entry.threads.append(threads)


def write_cost(out: Path, spent: Sequence[Spent]) -> Path:
    path = out / COST
    rows = [asdict(entry) | {"tokens_per_s": entry.rate} for entry in spent]
    total = sum(entry.seconds for entry in spent)
    atomic_write_text(path, json.dumps({"per_model_length": rows, "seconds": total}, indent=2) + "\n")
    return path


def cost_lines(spent: Sequence[Spent]) -> list[str]:
    """One line per model × L and the total, e.g. ``smollm2 at L = 1,024: 9 runs, 1,080 samples,
    1,935,360 tokens in 2h41m (200 tokens/s; 1 thread)``."""
    lines = []
    for entry in spent:
        rate = f"{entry.rate:,.0f} tokens/s" if entry.rate else "no tokens timed"
        threads = "/".join(entry.threads) or "?"
        lines.append(
            f"{entry.model} at L = {entry.length:,}: {entry.runs} runs, {entry.samples:,} samples, "
            f"{entry.tokens:,} tokens in {format_duration(entry.seconds)} ({rate}; threads {threads})"
            + (f"; not timed, counted in no sum: {', '.join(entry.untimed)}" if entry.untimed else "")
        )
    total = sum(entry.seconds for entry in spent)
    lines.append(f"in all {format_duration(total)} of wall time, summed over every session of every run")
    return lines
