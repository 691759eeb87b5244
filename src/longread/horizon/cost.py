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
