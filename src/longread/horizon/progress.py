"""The campaign's progress: runs done of at most how many, samples scored, their rate and an ETA (the
search stops early where the answer is found, so the ETA is an upper bound)."""

from __future__ import annotations

import time
from collections.abc import Callable

from longread.progress import format_duration


class CampaignProgress:
    def __init__(
        self,
        planned_runs: int,
        samples_per_run: int,
        say: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.planned, self.per_run, self.say, self.clock = planned_runs, samples_per_run, say, clock
        self.done = 0
        self.scored = 0
        self.seconds = 0.0
        self._started = 0.0

    def start(self, name: str) -> None:
        self._started = self.clock()
        self.say(f"[run {self.done + 1} of at most {self.planned}] {name}")

    def finish(self, name: str, scored: int, already: int) -> None:
        spent = self.clock() - self._started
        self.done += 1
        self.scored += scored
        self.seconds += spent
        self.say(
            f"  {name}: {scored} scored, {already} already done, {format_duration(spent)}; {self.status()}"
        )

    def status(self) -> str:
        left = max(self.planned - self.done, 0)
        if self.scored == 0 or self.seconds <= 0:
            return f"campaign: {self.done} run(s) done, at most {left} to go"
        rate = self.scored / self.seconds
        eta = left * self.per_run / rate
        return (
            f"campaign: {self.done} run(s), {self.scored:,} samples in {format_duration(self.seconds)} "
            f"({rate * 60:.1f} samples/min); at most {left} run(s) left, ETA ≤ {format_duration(eta)}"
        )
