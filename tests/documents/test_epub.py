"""EPUB reader, on EPUBs that ebooklib builds at test time (no binaries in the repository)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from bs4 import BeautifulSoup, Tag
from ebooklib import epub

from longread.documents.ao3 import read_ao3_html
from longread.documents.epub import read_epub
from longread.errors import BadInputError, NoChaptersError
from tests.helpers import TEST_DATA

AO3_HTML = TEST_DATA / "ao3" / "lighthouse_ledger.html"

CHAPTER_BODY = "<p>{opening}</p><p>Second paragraph of {name}, with <em>emphasis</em>.</p>"


def _page(title: str, body: str, file_name: str, uid: str) -> epub.EpubHtml:
    page = epub.EpubHtml(title=title, file_name=file_name, uid=uid, lang="en")
    page.content = f"<html><head><title>{title}</title></head><body>{body}</body></html>"
    return page


def _write(book: epub.EpubBook, pages: list[epub.EpubHtml], path: Path, toc: list[epub.EpubHtml]) -> Path:
    for page in pages:
        book.add_item(page)
    book.toc = toc
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *pages]
    epub.write_epub(str(path), book)
    return path


@pytest.fixture(scope="module")
def plain_epub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    book = epub.EpubBook()
    book.set_identifier("urn:uuid:1234")
    book.set_title("The Glass Orchard")
    book.set_language("en")
    book.add_author("Ada Quince")
    book.add_metadata("DC", "subject", "Orchards")
    cover = _page("Cover", '<div><img src="cover.jpg" alt="cover"/></div>', "cover.xhtml", "cover-page")
    title = _page("Title page", "<h1>The Glass Orchard</h1><p>Ada Quince</p>", "titlepage.xhtml", "titlepage")
    chapters = [
        _page(
            "One",
            "<h1>Chapter I. The Seedling</h1>" + CHAPTER_BODY.format(opening="Glass trees grew.", name="one"),
            "ch1.xhtml",
            "ch1",
        ),
        _page(
            "Two",
            "<h2>Chapter II</h2>" + CHAPTER_BODY.format(opening="Winter came to the orchard.", name="two"),
            "ch2.xhtml",
            "ch2",
        ),
        # No heading in the document: the TOC title stands in.
        _page(
            "The Harvest",
            CHAPTER_BODY.format(opening="They picked the fruit.", name="three"),
            "ch3.xhtml",
            "ch3",
        ),
    ]
    path = tmp_path_factory.mktemp("epub") / "glass_orchard.epub"
    return _write(book, [cover, title, *chapters], path, chapters)


def test_plain_epub_chapters_from_the_spine(plain_epub: Path) -> None:
    book = read_epub(plain_epub)
    assert [c.heading for c in book.chapters] == ["Chapter I. The Seedling", "Chapter II", "The Harvest"]
    assert book.chapters[0].text == "Glass trees grew.\n\nSecond paragraph of one, with emphasis."
    assert not book.chapters[0].text.startswith("Chapter")  # the heading is not repeated in the text
    assert "skipped spine items without prose: cover.xhtml, titlepage.xhtml" in book.notes


def test_plain_epub_metadata(plain_epub: Path) -> None:
    book = read_epub(plain_epub)
    assert (book.id, book.title, book.author, book.language) == (
        "glass_orchard",
        "The Glass Orchard",
        "Ada Quince",
        "en",
    )
    assert book.source == "epub"
    assert book.metadata["subjects"] == "Orchards"
    assert book.metadata["identifier"] == "urn:uuid:1234"


def _split_like_calibre(html_path: Path) -> tuple[str, list[str], str]:
    """The AO3 download cut the way AO3's calibre run cuts it: preface, one file per chapter, afterword.

    Each piece keeps its wrappers (div#chapters, div.meta.group), as calibre's splitter does.
    """
    soup = BeautifulSoup(html_path.read_text(encoding="utf-8"), "lxml")
    preface, chapters_div, afterword = (
        soup.find("div", id=name) for name in ("preface", "chapters", "afterword")
    )
    assert isinstance(chapters_div, Tag)
    pieces: list[list[str]] = []
    for child in chapters_div.find_all(recursive=False):
        if "group" in (child.get("class") or []):
            pieces.append([])
        pieces[-1].append(str(child))
    chapters = [f'<div id="chapters" class="userstuff">{"".join(piece)}</div>' for piece in pieces]
    return str(preface), chapters, str(afterword)


@pytest.fixture(scope="module")
def ao3_epub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    preface, chapters, afterword = _split_like_calibre(AO3_HTML)
    book = epub.EpubBook()
    book.set_identifier("urn:uuid:ao3-40000001")
    book.set_title("The Lighthouse Keeper's Ledger")
    book.set_language("en")
    book.add_author("saltwater_quill")
    book.add_metadata("DC", "publisher", "Archive of Our Own")
    for subject in ("Fanworks", "General Audiences", "Original Work"):
        book.add_metadata("DC", "subject", subject)
    pages = [_page("Preface", preface, "Lighthouse_split_000.xhtml", "split000")]
    for index, chapter in enumerate(chapters, 1):
        pages.append(
            _page(f"Chapter {index}", chapter, f"Lighthouse_split_{index:03}.xhtml", f"split{index:03}")
        )
    pages.append(_page("Afterword", afterword, f"Lighthouse_split_{len(pages):03}.xhtml", "afterword"))
    path = tmp_path_factory.mktemp("ao3epub") / "lighthouse.epub"
    return _write(book, pages, path, pages)


def test_ao3_epub_reads_like_the_html_download(ao3_epub: Path) -> None:
    from_epub = read_epub(ao3_epub)
    from_html = read_ao3_html(AO3_HTML)
    assert from_epub.chapters == from_html.chapters
    assert len(from_epub.chapters) == 12
    assert from_epub.source == "ao3-epub"
    assert from_epub.id == "40000001"


def test_ao3_epub_drops_preface_afterword_and_notes(ao3_epub: Path) -> None:
    book = read_epub(ao3_epub)
    text, _ = book.render()
    assert "SENTINEL" not in text
    assert "Posted originally on the" not in text and "drop by the archive" not in text
    assert book.notes[0].startswith("removed 10 notes/summary blocks")


def test_ao3_epub_metadata_from_the_preface(ao3_epub: Path) -> None:
    book = read_epub(ao3_epub)
    assert book.metadata["rating"] == "General Audiences"
    assert book.metadata["words"] == "12480"
    assert book.metadata["publisher"] == "Archive of Our Own"
    assert book.language == "en"
    assert book.author == "saltwater_quill"


# --- bad inputs -----------------------------------------------------------------------------


def test_corrupt_epub(tmp_path: Path, plain_epub: Path) -> None:
    path = tmp_path / "cut.epub"
    path.write_bytes(plain_epub.read_bytes()[:400])
    with pytest.raises(BadInputError, match=r"cut\.epub: cannot read this EPUB"):
        read_epub(path)


def test_zip_that_is_not_an_epub(tmp_path: Path) -> None:
    path = tmp_path / "archive.epub"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("readme.txt", "hello")
    with pytest.raises(BadInputError, match=r"archive\.epub: cannot read this EPUB"):
        read_epub(path)


def test_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "book.epub"
    path.write_text("<html>not an epub</html>", encoding="utf-8")
    with pytest.raises(BadInputError, match=r"book\.epub: not an EPUB"):
        read_epub(path)


def test_empty_epub_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.epub"
    path.write_bytes(b"")
    with pytest.raises(BadInputError, match=r"empty\.epub: file is empty"):
        read_epub(path)


def test_epub_without_prose(tmp_path: Path) -> None:
    book = epub.EpubBook()
    book.set_identifier("x")
    book.set_title("Only a cover")
    book.set_language("en")
    cover = _page("Cover", '<div><img src="cover.jpg" alt=""/></div>', "cover.xhtml", "cover-page")
    path = _write(book, [cover], tmp_path / "cover_only.epub", [cover])
    with pytest.raises(NoChaptersError, match=r"cover_only\.epub: no spine document"):
        read_epub(path)
