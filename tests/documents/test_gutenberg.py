"""The Project Gutenberg reader: licence header/footer (modern and old), front matter, metadata."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from longread.documents.gutenberg import read_gutenberg
from longread.errors import BadInputError, NoChaptersError
from tests.helpers import GUTENBERG as CORPUS
from tests.helpers import needs_shared as needs_corpus

PROSE = (
    "The rain came down on the harbour all night, and the ships rocked at their moorings while the\n"
    "keeper walked the long pier with his lamp, counting the hulls and thinking of the morning.\n"
)
STORY = (
    "THE HARBOUR\n\nBy A. Writer\n\n\nCONTENTS\n\nCHAPTER I. The Storm\nCHAPTER II. The Calm\n\n\n"
    f"CHAPTER I. The Storm\n\n{PROSE}\n\n\nCHAPTER II. The Calm\n\n{PROSE}\n\n\nTHE END\n"
)
MODERN = (
    "\ufeffThe Project Gutenberg EBook of The Harbour, by A. Writer\r\n\r\n"
    "Title: The Harbour\r\n\r\nAuthor: A. Writer\r\n\r\n"
    "Release Date: May 1, 2001 [EBook #4242]\r\n\r\nLanguage: English\r\n\r\n"
    "*** START OF THIS PROJECT GUTENBERG EBOOK THE HARBOUR ***\r\n\r\n"
    "Produced by Volunteers\r\n\r\n\r\n" + STORY.replace("\n", "\r\n") + "\r\n\r\n"
    "End of the Project Gutenberg EBook of The Harbour, by A. Writer\r\n\r\n"
    "*** END OF THIS PROJECT GUTENBERG EBOOK THE HARBOUR ***\r\n\r\nSection 5. Licence text.\r\n"
)
OLD = (
    "*The Project Gutenberg Etext of The Harbour, by A. Writer*\n#3 in our series\n\n"
    "Title:  The Harbour\n\nAuthor:  A. Writer\n\nRelease Date:  November, 2001  [Etext #2891]\n\n"
    "***START**THE SMALL PRINT!**FOR PUBLIC DOMAIN ETEXTS**START***\nLegal words.\n"
    "*END THE SMALL PRINT! FOR PUBLIC DOMAIN ETEXTS*Ver.04.07.00*END*\n\n\n"
    + STORY
    + "\n\nEnd of The Project Gutenberg Etext of The Harbour, by A. Writer\n"
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def test_modern_header_and_footer_are_stripped(tmp_path: Path) -> None:
    book = read_gutenberg(write(tmp_path, "pg4242.txt.gz", MODERN))
    assert (book.id, book.title, book.author, book.language) == ("4242", "The Harbour", "A. Writer", "en")
    assert [c.heading for c in book.chapters] == ["CHAPTER I. The Storm", "CHAPTER II. The Calm"]
    assert book.chapters[0].text == PROSE.strip()
    everything = " ".join(c.text for c in book.chapters)
    assert "Gutenberg" not in everything and "Licence" not in everything
    assert book.chapters[-1].text == PROSE.strip()  # "THE END" trimmed
    assert any("front matter" in note and "contents list" in note for note in book.notes)
    assert book.source.endswith("pg4242.txt.gz")


def test_old_header_without_markers(tmp_path: Path) -> None:
    book = read_gutenberg(write(tmp_path, "howards.txt", OLD))
    assert (book.id, book.title, book.author) == ("2891", "The Harbour", "A. Writer")
    assert len(book.chapters) == 2
    assert "SMALL PRINT" not in book.chapters[0].text
    assert "Gutenberg" not in book.chapters[-1].text


def test_id_from_file_name_when_header_has_none(tmp_path: Path) -> None:
    text = MODERN.replace("[EBook #4242]", "")
    assert read_gutenberg(write(tmp_path, "pg77.txt", text)).id == "77"


def test_file_without_gutenberg_markers_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "novel.txt", STORY)
    with pytest.raises(BadInputError, match="no Project Gutenberg header/footer") as info:
        read_gutenberg(path)
    assert "novel.txt" in str(info.value)
    assert "--format plain" in str(info.value)


def test_book_without_chapters_raises_no_chapters(tmp_path: Path) -> None:
    text = MODERN.replace(STORY.replace("\n", "\r\n"), (PROSE * 30).replace("\n", "\r\n"))
    with pytest.raises(NoChaptersError, match="no chapter headings"):
        read_gutenberg(write(tmp_path, "pg1.txt", text))


def test_empty_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="empty"):
        read_gutenberg(write(tmp_path, "pg1.txt", ""))


@needs_corpus
def test_moby_dick() -> None:
    book = read_gutenberg(CORPUS / "pg2701.txt.gz")
    assert (book.id, book.title, book.author) == ("2701", "Moby Dick; or The Whale", "Herman Melville")
    assert len(book.chapters) == 136
    assert book.chapters[0].text.startswith("Call me Ishmael.")
    assert book.chapters[-1].heading.startswith("Epilogue")
    assert "Project Gutenberg" not in book.chapters[-1].text


@needs_corpus
def test_old_header_book_in_corpus() -> None:
    book = read_gutenberg(CORPUS / "pg2891.txt.gz")  # Howards End: a pre-2004 header, no markers
    assert (book.id, book.author) == ("2891", "E. M. Forster")
    assert "Howard" in book.title
    assert len(book.chapters) == 44
    assert book.chapters[0].text.startswith("One may as well begin with Helen")
    assert "Gutenberg" not in book.chapters[-1].text


@needs_corpus
def test_parts_in_a_tale_of_two_cities() -> None:
    book = read_gutenberg(CORPUS / "pg98.txt.gz")
    assert book.chapters[0].parts == ("Book the First--Recalled to Life",)
    with_parts = [c.heading for c in book.chapters if c.parts]
    assert len(with_parts) == 3
    assert book.chapters[0].text.startswith("It was the best of times")
