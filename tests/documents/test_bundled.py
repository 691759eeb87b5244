"""``bundled:`` names the novels shipped with longread wherever a command takes books; ``longread books``
lists them."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from longread.cli.app import app
from longread.documents.bundled import bundled_books, resolve_bundled
from longread.documents.reader import read_book
from longread.documents.sources import iter_sources
from longread.errors import BadInputError


def test_bundled_names_one_book_or_all_and_refuses_an_unknown_one() -> None:
    books = bundled_books()
    assert [b.name for b in books] == ["pg120.txt.gz", "pg1342.txt.gz", "pg161.txt.gz", "pg2852.txt.gz",
                                       "pg84.txt.gz"]  # fmt: skip
    assert resolve_bundled("bundled:") == books
    assert resolve_bundled("bundled:pg84") == resolve_bundled("bundled:84") == [books[-1]]
    assert [s.path for s in iter_sources(["bundled:", "bundled:84"])] == [*books, books[-1]]
    assert read_book("bundled:pg84").title.startswith("Frankenstein")
    with pytest.raises(BadInputError, match=r"no bundled book of that name .*bundled:pg1342"):
        resolve_bundled("bundled:pg1")
    with pytest.raises(BadInputError, match="names 5 books, not one"):
        read_book("bundled:")


def test_books_lists_names_titles_and_paths() -> None:
    result = CliRunner().invoke(app, ["books"])
    assert result.exit_code == 0, result.output
    assert "bundled:pg1342   Pride and Prejudice (Jane Austen): 61 chapters" in result.output
    paths = CliRunner().invoke(app, ["books", "--paths"]).output.split()
    assert paths == [str(book) for book in bundled_books()]
