"""A memory probe's verdicts read back from its folder, for the split report and builds that leave out
remembered books (``books.json`` as :func:`longread.probes.memory.run.write_memory` writes it)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longread.errors import BadInputError
from longread.models.identity import model_name
from longread.probes.memory.rule import CANNOT_TELL

BOOKS_FILE = "books.json"


@dataclass(frozen=True)
class MemoryVerdicts:
    """Per book id: its scores and verdict, and the model that was probed."""

    path: Path
    model: dict[str, Any]
    rule: str
    books: dict[str, dict[str, Any]]
    """book id → ``{title, scores, remembered, notes}``."""

    @property
    def model_name(self) -> str:
        return model_name(self.model)

    def verdict(self, book_id: str) -> bool | str | None:
        """True, False or "cannot tell" as probed; None when the book was not probed."""
        entry = self.books.get(book_id)
        if entry is None:
            return None
        value = entry.get("remembered")
        return CANNOT_TELL if value is None or value == CANNOT_TELL else bool(value)

    def remembered(self) -> dict[str, str]:
        """book id → why it is called remembered (the rule's scores that hold)."""
        return {
            book_id: f"remembered by {self.model_name} ({self.why(book_id)}; rule {self.rule})"
            for book_id, entry in self.books.items()
            if entry.get("remembered") is True
        }

    def cannot_tell(self) -> dict[str, str]:
        """book id → why the probes cannot tell whether the model remembers it."""
        return {
            book_id: f"{CANNOT_TELL} for {self.model_name} ({self.why(book_id)}; rule {self.rule})"
            for book_id in self.books
            if self.verdict(book_id) == CANNOT_TELL
        }

    def why(self, book_id: str) -> str:
        """The book's scores the rule names, e.g. ``cloze 0.42, extraction_exact 0.00``."""
        scores = self.books.get(book_id, {}).get("scores", {})
        names = [part.split(">=")[0].strip() for part in self.rule.split(",")]
        shown = [
            f"{name} {scores[name]['value']:.2f}"
            for name in names
            if isinstance(scores.get(name), Mapping) and scores[name].get("value") is not None
        ]
        return ", ".join(shown) or "no score"


def load_verdicts(probe_dir: Path) -> MemoryVerdicts:
    """The verdicts in ``probe_dir/books.json``; a clear error when the folder is not a memory probe's."""
    path = Path(probe_dir) / BOOKS_FILE
    hint = "give the --out folder of `longread probe memory`"
    if not path.is_file():
        raise BadInputError(path, "no books.json here: not a memory probe's folder", hint)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadInputError(path, f"not JSON ({exc})", hint) from None
    if not isinstance(data, Mapping) or not isinstance(data.get("books"), list):
        raise BadInputError(path, "has no list 'books'", hint)
    books: dict[str, dict[str, Any]] = {}
    for number, entry in enumerate(data["books"], start=1):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("book"), str):
            raise BadInputError(path, f"books[{number}] has no 'book' id", hint)
        books[entry["book"]] = dict(entry)
    model = data.get("model")
    if not isinstance(model, Mapping):
        raise BadInputError(path, "has no 'model' (which model was probed?)", hint)
    return MemoryVerdicts(path=path, model=dict(model), rule=str(data.get("rule", "?")), books=books)
