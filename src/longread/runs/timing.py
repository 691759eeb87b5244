"""How long a run took and how fast it went, kept apart from its results.

Throughput and wall time change from one machine or session to the next, so
they live in ``timing.json`` and never in ``results.json`` — that way a run
that was killed and resumed has a ``results.json`` byte-identical to an
uninterrupted one. Wall time accumulates over all sessions of a run.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

TIMING_SCHEMA_VERSION = 1


class SessionTiming(BaseModel):
    """One process's share of a run (a fresh start or one resume)."""

    model_config = ConfigDict(extra="ignore")

    started_at: str
    wall_time_s: float = 0.0
    samples: int = 0
    tokens: int = 0
    code_version: str = ""
    git_commit: str | None = None
    runtime: dict[str, Any] = {}


class Throughput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    wall_time_s: float
    samples: int
    tokens: int
    samples_per_s: float | None
    tokens_per_s: float | None


class RunTiming(BaseModel):
    model_config = ConfigDict(extra="ignore")

    schema_version: int = TIMING_SCHEMA_VERSION
    sessions: list[SessionTiming] = []

    def total(self) -> Throughput:
        wall = sum(s.wall_time_s for s in self.sessions)
        samples = sum(s.samples for s in self.sessions)
        tokens = sum(s.tokens for s in self.sessions)
        return Throughput(
            wall_time_s=round(wall, 3),
            samples=samples,
            tokens=tokens,
            samples_per_s=round(samples / wall, 3) if wall > 0 else None,
            tokens_per_s=round(tokens / wall, 1) if wall > 0 and tokens else None,
        )

    def to_json_dict(self) -> dict[str, Any]:
        return {**self.model_dump(mode="json"), "total": self.total().model_dump(mode="json")}
