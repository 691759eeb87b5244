"""Errors a user can act on: each says what is wrong, where, and what to do."""

from __future__ import annotations

from pathlib import Path


class LongreadError(Exception):
    """Base class for every error longread raises on purpose."""


class BadInputError(LongreadError):
    """An input file (or one item inside it) cannot be used.

    The message always names the file (and line or book when known), what is
    wrong, and what the user can do about it.
    """

    def __init__(
        self,
        path: str | Path | None,
        problem: str,
        hint: str = "",
        *,
        line: int | None = None,
        item: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.problem = problem
        self.hint = hint
        self.line = line
        self.item = item
        where = self.path or "<input>"
        if line is not None:
            where += f", line {line}"
        if item is not None:
            where += f" ({item})"
        message = f"{where}: {problem}"
        if hint:
            message += f" — {hint}"
        super().__init__(message)

    def __reduce__(self) -> tuple[object, ...]:
        # Errors travel back from worker processes; the default pickling would call
        # __init__ with the message only.
        return (
            _rebuild_bad_input,
            (type(self), self.path, self.problem, self.hint, self.line, self.item),
        )


def _rebuild_bad_input(
    cls: type[BadInputError], path: str | None, problem: str, hint: str, line: int | None, item: str | None
) -> BadInputError:
    return cls(path, problem, hint, line=line, item=item)


class NoChaptersError(BadInputError):
    """A book whose chapter structure could not be found (it is reported, never split at random)."""
