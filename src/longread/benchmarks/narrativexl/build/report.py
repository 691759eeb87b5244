"""The build report: per book, what was built (scenes, statuses, questions by type), what was skipped and why.

``NarrativeXLBuildReport.as_dict`` is what ``build_report.json`` holds (it must not depend on
whether the build was fresh or resumed); ``summary_lines`` is what the command prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BUILD_REPORT_FILE = "build_report.json"


@dataclass
class BookOutcome:
    book_id: str
    title: str = ""
    role: str = "questions"
    """``questions`` or ``decoys only`` (a book that only lends other-book decoys)."""
    scenes: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    questions: dict[str, int] = field(default_factory=dict)
    none_answers: int = 0
    corrections: int = 0
    characters: int = 0
    skipped_questions: dict[str, int] = field(default_factory=dict)
    redrawn_questions: dict[str, int] = field(default_factory=dict)
    """Questions drawn again (two options with one text), by ``"kind: reason"``."""
    left_out: list[str] = field(default_factory=list)
    failed_scenes: list[str] = field(default_factory=list)
    failed_merges: list[str] = field(default_factory=list)
    """Hierarchical summaries whose merge failed, with why (their text is empty)."""


@dataclass
class NarrativeXLBuildReport:
    out: Path
    books: list[BookOutcome] = field(default_factory=list)
    skipped_books: list[tuple[str, str]] = field(default_factory=list)
    excluded_books: list[tuple[str, str]] = field(default_factory=list)
    """Books left out on purpose (``--exclude-remembered``): (source, why)."""
    generated: int = 0
    cached: int = 0

    def as_dict(self) -> dict[str, Any]:
        out = {
            "books": [vars(book) for book in self.books],
            "skipped_books": [{"book": book, "reason": reason} for book, reason in self.skipped_books],
            # made now vs from the cache differ between a fresh and a resumed build; the file must not
            "generations": self.generated + self.cached,
        }
        if self.excluded_books:
            out["excluded_books"] = [{"book": book, "reason": why} for book, why in self.excluded_books]
        return out

    def summary_lines(self) -> list[str]:
        lines = [f"NarrativeXL built in {self.out}: {len(self.books)} book(s)"]
        for book in self.books:
            status = ", ".join(f"{count} {name}" for name, count in sorted(book.statuses.items()))
            kinds = ", ".join(f"{count} {name}" for name, count in sorted(book.questions.items()))
            if book.role != "questions":
                lines.append(f"  {book.book_id} ({book.role}): {book.scenes} scenes ({status})")
                continue
            lines.append(
                f"  {book.book_id}: {book.scenes} scenes ({status}); questions: {kinds or 'none'} "
                f"({book.none_answers} with 'None of the above.' right); {book.corrections} corrections; "
                f"{book.characters} characters renamed"
            )
            for reason, count in sorted(book.skipped_questions.items()):
                lines.append(f"    skipped {count} question(s): {reason}")
            for reason, count in sorted(book.redrawn_questions.items()):
                lines.append(f"    redrawn {count} question(s): {reason}")
            for failure in book.failed_scenes:
                lines.append(f"    scene {failure}")
            for failure in book.failed_merges:
                lines.append(f"    hierarchical merge failed: {failure}")
        for name, reason in self.excluded_books:
            lines.append(f"  left out {name}: {reason}")
        for name, reason in self.skipped_books:
            lines.append(f"  skipped {name}: {reason}")
        lines.append(
            f"generations: {self.generated} made now, {self.cached} from the cache; report: "
            f"{self.out / BUILD_REPORT_FILE}"
        )
        return lines
