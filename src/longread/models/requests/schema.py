"""What every request and result shares: the schema version it carries, and the rule for optional limits.

``schema_version`` is stamped on each request and result (not compared), so a
stored one can be told from a newer layout. A limit such as
``max_context_tokens`` is either ``None`` (no limit) or at least 1.
"""

from __future__ import annotations

SCHEMA_VERSION = 1


def _positive_or_none(name: str, value: int | None) -> None:
    if value is not None and value < 1:
        raise ValueError(f"{name} must be at least 1 or None, got {value}")
