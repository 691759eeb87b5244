"""longread: does a language model really use what it read thousands of tokens ago?"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from longread.documents.book import Book, Chapter
    from longread.documents.corpus import iter_books as read_books
    from longread.documents.reader import read_book

__version__ = "0.1.0"

__all__ = ["Book", "Chapter", "__version__", "read_book", "read_books"]


def __getattr__(name: str) -> Any:
    """The face, loaded on first use: ``import longread.processes.guard`` (a process that must start in
    a fraction of a second) does not read the document layer."""
    if name in ("Book", "Chapter"):
        from longread.documents import book

        return getattr(book, name)
    if name == "read_books":
        from longread.documents.corpus import iter_books

        return iter_books
    if name == "read_book":
        from longread.documents.reader import read_book

        return read_book
    raise AttributeError(f"module 'longread' has no attribute {name!r}")
