"""The public-domain novels shipped inside the package, and the ``bundled:`` names for them.

``bundled:`` names them all, ``bundled:pg84`` (or ``bundled:84``) one: any command that takes book paths
takes these too, so examples run on every machine without a file beside the repository.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from longread.errors import BadInputError

PREFIX = "bundled:"


def bundled_books() -> list[Path]:
    """The bundled novels (Project Gutenberg files as published), sorted by file name."""
    folder = Path(str(resources.files("longread") / "data" / "books"))
    return sorted(folder.glob("*.txt.gz"))


def is_bundled_name(raw: str | Path) -> bool:
    return str(raw).startswith(PREFIX)


def resolve_bundled(raw: str | Path) -> list[Path]:
    """The files ``bundled:`` / ``bundled:NAME`` names; an unknown name is an error listing the names."""
    name = str(raw)[len(PREFIX) :].strip().removesuffix(".txt.gz")
    books = bundled_books()
    if not name:
        return books
    wanted = name if name.startswith("pg") else f"pg{name}"
    found = [book for book in books if book.name.removesuffix(".txt.gz") == wanted]
    if not found:
        names = ", ".join(f"{PREFIX}{book.name.removesuffix('.txt.gz')}" for book in books)
        raise BadInputError(
            raw, "no bundled book of that name", f"use {PREFIX} (all of them) or one of {names}"
        )
    return found
