"""A memory probe's finished books, kept as each finishes, so an interrupted probe resumes at the next book.

``finished-books.jsonl`` in the output folder holds one line per probed book: the probe's identity (its
settings and the model as it defines results — not threads or batch sizes), the book's text fingerprint,
its items and its scores before the verdicts (which are judged over all books at the end). A probe run
again with the same settings, model and books takes its finished books from the file and probes only the
rest; one whose settings or model differ is refused, naming what differs, and a book whose text changed
is probed again. The file is append-only and a line is made durable before the next book starts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from longread.documents.book import Book
from longread.documents.excerpts import BookExcerpts
from longread.probes.errors import ProbeSettingsError
from longread.probes.memory.book import BookMemory
from longread.runs.config import canonical_json, defining_model, mapping_differences
from longread.runs.jsonl_log import JsonlLog

JOURNAL = "finished-books.jsonl"


def probe_identity(settings: Mapping[str, Any], model: Mapping[str, Any]) -> dict[str, Any]:
    """What defines a probe's items: its settings and the model without how it computes or how its files
    were pointed at (:func:`~longread.runs.config.defining_model`)."""
    kept = defining_model(model)
    identity: dict[str, Any] = json.loads(canonical_json({"settings": dict(settings), "model": kept}))
    return identity


def as_excerpts(given: Book | BookExcerpts) -> BookExcerpts:
    return given if isinstance(given, BookExcerpts) else BookExcerpts(given)


def text_fingerprint(excerpts: BookExcerpts) -> str:
    """The sha256 of what the probe reads of a book: its text as one string and the benchmark's breaks."""
    text, _ = excerpts.book.render()
    payload = canonical_json({"text": text, "breaks": [list(pair) for pair in excerpts.breaks]})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class MemoryJournal:
    """The open ``finished-books.jsonl`` of one output folder (locked against a second probe)."""

    def __init__(self, out: Path, identity: dict[str, Any]) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.path = out / JOURNAL
        self.identity = identity
        self._log = JsonlLog(self.path)
        self.finished: dict[str, dict[str, Any]] = {}
        self._prints: dict[int, tuple[BookExcerpts, str]] = {}
        """Each book's fingerprint, computed once (keyed by the object, which is held so its id stays its)."""
        try:
            for number, row in enumerate(self._log.initial_rows, start=1):
                self._check(number, row)
                self.finished[row["book"]] = row
        except BaseException:
            self._log.close()
            raise

    def _check(self, number: int, row: dict[str, Any]) -> None:
        missing = [key for key in ("identity", "book", "fingerprint", "items", "summary") if key not in row]
        if missing:
            raise ProbeSettingsError(
                f"{self.path}, line {number}: not a finished book of a memory probe (no "
                f"{', '.join(missing)}); give another --out, or delete the file to probe every book again"
            )
        # A journal written before the weights' folder stopped defining a probe still resumes.
        stored = {**row["identity"], "model": defining_model(row["identity"].get("model") or {})}
        if stored != self.identity:
            differing = [
                f"{key}: {before!r} then, {after!r} now"
                for key, (before, after) in mapping_differences(stored, self.identity).items()
            ]
            raise ProbeSettingsError(
                f"{self.path}: its books were probed with other settings or another model "
                f"({'; '.join(differing)}); give another --out, or delete the file to probe every book again"
            )

    def finished_books(self, books: Sequence[BookExcerpts]) -> int:
        """How many of ``books`` the journal holds (probed on the same text)."""
        return sum(self.done(excerpts) is not None for excerpts in books)

    def _fingerprint(self, excerpts: BookExcerpts) -> str:
        held = self._prints.get(id(excerpts))
        if held is None or held[0] is not excerpts:
            held = self._prints[id(excerpts)] = (excerpts, text_fingerprint(excerpts))
        return held[1]

    def done(self, excerpts: BookExcerpts) -> tuple[list[dict[str, Any]], BookMemory] | None:
        """A finished book's items and scores, when it was probed on the same text; else None."""
        row = self.finished.get(excerpts.book.id)
        if row is None or row["fingerprint"] != self._fingerprint(excerpts):
            return None
        return list(row["items"]), BookMemory(**row["summary"])

    def add(self, excerpts: BookExcerpts, items: Sequence[dict[str, Any]], summary: BookMemory) -> None:
        row = {
            "identity": self.identity,
            "book": excerpts.book.id,
            "fingerprint": self._fingerprint(excerpts),
            "items": list(items),
            "summary": asdict(summary),
        }
        self._log.append(row, len(self.finished))
        self.finished[excerpts.book.id] = row

    def close(self) -> None:
        self._log.close()

    def __enter__(self) -> MemoryJournal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
