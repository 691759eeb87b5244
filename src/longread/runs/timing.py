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
    rows_at_start: int | None = None
    """Rows in ``samples.jsonl`` when the session started (None in timings written before it was kept)."""
    ended: str | None = None
    """``closed`` when the session ended normally; ``killed`` when a later session found it never closed
    (its ``samples`` then counted from the rows it left in ``samples.jsonl``, its wall time and tokens as of
    its last checkpoint); None while it runs."""


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

    def count_unclosed(self, rows_now: int) -> None:
        """Give a session that was killed (never closed) the rows it wrote, as ``samples.jsonl`` holds them
        now (``rows_now``, before this session writes any): a kill between checkpoints lost its count."""
        for index, session in enumerate(self.sessions):
            if session.ended is not None:
                continue
            if session.rows_at_start is not None:
                following = next(
                    (s.rows_at_start for s in self.sessions[index + 1 :] if s.rows_at_start is not None),
                    rows_now,
                )
                session.samples = max(session.samples, following - session.rows_at_start)
                session.ended = "killed"
            elif index == len(self.sessions) - 1:
                # A timing written before sessions were closed explicitly: the last session was killed if
                # the log holds rows no session counted.
                written = rows_now - sum(s.samples for s in self.sessions[:index])
                if written > session.samples:
                    session.samples = written
                    session.ended = "killed"

    def to_json_dict(self) -> dict[str, Any]:
        return {**self.model_dump(mode="json"), "total": self.total().model_dump(mode="json")}
