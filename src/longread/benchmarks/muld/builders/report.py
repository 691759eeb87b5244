"""What every MuLD builder shares: the length filter and the build report written beside the data.

The report (``<out>.report.json``) lists the settings, every source item kept
and every one dropped with its reason (too short under the stated tokenizer, no
references, unreadable …), so nothing is dropped silently.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longread.benchmarks.muld.names import LENGTH_TOKENIZER, MIN_TOKENS
from longread.files import atomic_write_text
from longread.text.tokenizers import NamedTokenizer, load_tokenizer


@dataclass
class LengthFilter:
    """Keep a document only if it has at least ``min_tokens`` tokens of ``tokenizer``."""

    min_tokens: int = MIN_TOKENS
    tokenizer: str = LENGTH_TOKENIZER
    _loaded: NamedTokenizer | None = field(default=None, repr=False)

    def count(self, text: str) -> int:
        if self._loaded is None:
            self._loaded = load_tokenizer(self.tokenizer)
        return self._loaded.count(text)

    def check(self, text: str) -> tuple[bool, int]:
        """(long enough, token count)."""
        tokens = self.count(text)
        return tokens >= self.min_tokens, tokens

    def reason(self, tokens: int) -> str:
        return f"too short: {tokens} {self.tokenizer} tokens < {self.min_tokens}"

    def describe(self) -> dict[str, Any]:
        return {"min_tokens": self.min_tokens, "tokenizer": self.tokenizer}


@dataclass
class BuildReport:
    task: str
    sources: list[str]
    settings: dict[str, Any]
    kept: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    excluded: list[dict[str, Any]] = field(default_factory=list)
    """Items left out on purpose (``--exclude-remembered``), with why: not drops of bad input."""

    def keep(self, item: str, **details: Any) -> None:
        self.kept.append({"item": item, **details})

    def drop(self, item: str, reason: str, **details: Any) -> None:
        self.dropped.append({"item": item, "reason": reason, **details})

    def exclude(self, item: str, why: str, **details: Any) -> None:
        self.excluded.append({"item": item, "why": why, **details})

    def as_json(self) -> dict[str, Any]:
        reasons: dict[str, int] = {}
        for entry in self.dropped:
            head = str(entry["reason"]).split(":")[0]
            reasons[head] = reasons.get(head, 0) + 1
        return {
            "task": f"muld/{self.task}",
            "sources": self.sources,
            "settings": self.settings,
            "kept": len(self.kept),
            "dropped": len(self.dropped),
            "dropped_by_reason": dict(sorted(reasons.items())),
            "kept_items": self.kept,
            "dropped_items": self.dropped,
            **({"excluded": len(self.excluded), "excluded_items": self.excluded} if self.excluded else {}),
        }

    def write(self, data_path: str | Path) -> Path:
        path = report_path(data_path)
        atomic_write_text(
            path, json.dumps(self.as_json(), indent=2, ensure_ascii=False, sort_keys=False) + "\n"
        )
        return path

    def summary(self) -> str:
        out = self.as_json()
        reasons = ", ".join(f"{k} {v}" for k, v in out["dropped_by_reason"].items())
        left_out = f", left out on purpose {len(self.excluded)}" if self.excluded else ""
        return (
            f"muld/{self.task}: kept {out['kept']}, dropped {out['dropped']}"
            + (f" ({reasons})" if reasons else "")
            + left_out
        )


def report_path(data_path: str | Path) -> Path:
    data_path = Path(data_path)
    name = data_path.name
    for suffix in (".bz2", ".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return data_path.with_name(name + ".report.json")
