"""EPUB books: chapters from the spine, AO3 EPUBs recognised and cleaned like AO3 HTML.

AO3 makes its EPUBs by running calibre over the HTML download and splitting it at
the chapter headings, so each spine item still carries the download's wrappers
(``div#preface``, ``div#chapters > div.meta.group > h2.heading``, ``div#afterword``)
and the AO3 HTML code reads it.
"""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import ebooklib
from bs4 import BeautifulSoup, Tag, XMLParsedAsHTMLWarning
from ebooklib import epub

from longread.documents.ao3 import (
    RemovedNotes,
    build_ao3_book,
    count_afterword,
    extract_chapters,
    normalise_language,
    paragraph_text,
    parse_preface,
)
from longread.documents.book import Book, Chapter
from longread.errors import BadInputError, NoChaptersError
from longread.files import read_bytes

EPUB_SOURCE = "epub"
AO3_EPUB_SOURCE = "ao3-epub"
AO3_PUBLISHER = "Archive of Our Own"

# Spine items that are furniture, not prose, by file name / id / epub:type.
_FURNITURE = re.compile(
    r"(^|[\W_])(cover|nav|toc|contents|titlepage|title[_-]page|halftitle|copyright|colophon|imprint)([\W_]|$)",
    re.IGNORECASE,
)
_HEADINGS = ("h1", "h2", "h3")


def read_epub(path: str | Path) -> Book:
    """Read an EPUB into a Book: one chapter per prose spine item, in reading order."""
    path = Path(path)
    book = _open_epub(path)
    documents = list(_spine_documents(book))
    if any(soup.find("div", id="chapters") is not None for _, soup in documents):
        return _read_ao3_epub(path, book, documents)
    return _read_plain_epub(path, book, documents)


def _open_epub(path: Path) -> epub.EpubBook:
    data = read_bytes(path)
    if not data:
        raise BadInputError(path, "file is empty", "give a complete .epub file")
    if not data.startswith(b"PK"):
        raise BadInputError(
            path, "not an EPUB (not a zip archive)", "give an .epub file; convert other formats"
        )
    try:
        with warnings.catch_warnings():
            # ebooklib warns about options whose defaults will change; that is not the user's business.
            warnings.simplefilter("ignore")
            return epub.read_epub(io.BytesIO(data), options={"ignore_ncx": False})
    except Exception as exc:  # zipfile, lxml and ebooklib each raise their own types
        raise BadInputError(
            path,
            f"cannot read this EPUB ({type(exc).__name__}: {exc})",
            "the file is truncated or corrupt; download or export it again",
        ) from None


def _spine_documents(book: epub.EpubBook) -> Iterable[tuple[Any, BeautifulSoup]]:
    """The spine's XHTML documents in reading order, parsed; the navigation document is skipped."""
    for entry in book.spine:
        idref = entry[0] if isinstance(entry, tuple) else entry
        item = book.get_item_with_id(idref)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT:
            continue
        if isinstance(item, epub.EpubNav) or "nav" in (getattr(item, "properties", None) or []):
            continue
        with warnings.catch_warnings():
            # XHTML through the HTML parser is deliberate: it forgives the broken markup real EPUBs carry.
            warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
            soup = BeautifulSoup(item.get_content(), "lxml")
        yield item, soup


# ---------------------------------------------------------------------------
# AO3 EPUBs


def _read_ao3_epub(path: Path, book: epub.EpubBook, documents: list[tuple[Any, BeautifulSoup]]) -> Book:
    metadata = _dublin_core(book)
    removed = RemovedNotes()
    chapters: list[Chapter] = []
    for _item, soup in documents:
        if soup.find("div", id="preface") is not None:
            # The preface's tag list is richer than the OPF's flat subject list.
            metadata.update(parse_preface(soup))
        chapters_div = soup.find("div", id="chapters")
        if isinstance(chapters_div, Tag):
            chapters.extend(extract_chapters(chapters_div, removed))
        count_afterword(soup, removed)
    chapters = [chapter for chapter in chapters if chapter.heading or chapter.text]
    if not any(chapter.text for chapter in chapters):
        raise NoChaptersError(path, "the AO3 EPUB holds no chapter text", "download the work again from AO3")
    return build_ao3_book(path, metadata, chapters, removed, AO3_EPUB_SOURCE)


# ---------------------------------------------------------------------------
# Any other EPUB


def _read_plain_epub(path: Path, book: epub.EpubBook, documents: list[tuple[Any, BeautifulSoup]]) -> Book:
    metadata = _dublin_core(book)
    toc_titles = _toc_titles(book.toc)
    chapters: list[Chapter] = []
    skipped: list[str] = []
    for item, soup in documents:
        name = str(item.get_name())
        if _is_furniture(item, soup):
            skipped.append(name)
            continue
        chapter = _document_chapter(soup, toc_titles.get(name, ""))
        if chapter is None:
            skipped.append(name)
            continue
        chapters.append(chapter)
    if not chapters:
        raise NoChaptersError(
            path, "no spine document of the EPUB holds prose", "check that the EPUB has text"
        )
    notes = [f"skipped spine items without prose: {', '.join(skipped)}"] if skipped else []
    stem = path.name.rsplit(".", 1)[0]
    return Book(
        id=stem,
        title=metadata.get("title", stem),
        author=metadata.get("author", ""),
        language=normalise_language(metadata.get("language", "")),
        source=EPUB_SOURCE,
        chapters=tuple(chapters),
        metadata=metadata,
        notes=tuple(notes),
    )


def _is_furniture(item: Any, soup: BeautifulSoup) -> bool:
    # The outer elements say what the page is (epub:type="cover", class="titlepage", …).
    outer = soup.find_all(["body", "section", "div"], limit=4)
    marks = " ".join(f"{tag.get('epub:type') or ''} {tag.get('class') or ''}" for tag in outer)
    names = f"{item.get_name()} {item.get_id()} {marks}"
    # A cover or contents page is short; a long item named "toc…" is still prose, so keep it.
    return bool(_FURNITURE.search(names)) and len(soup.get_text(" ").split()) < 300


def _document_chapter(soup: BeautifulSoup, toc_title: str) -> Chapter | None:
    body = soup.find("body")
    if not isinstance(body, Tag):
        return None
    heading_tag = body.find(_HEADINGS)
    heading = ""
    if isinstance(heading_tag, Tag):
        heading = " ".join(heading_tag.get_text(" ").split())
        heading_tag.decompose()  # the heading is the chapter's heading, not the first line of its text
    text = paragraph_text(body)
    if not text:
        return None
    return Chapter(heading=heading or toc_title, text=text)


def _toc_titles(toc: Any) -> dict[str, str]:
    """href (without #fragment) → the first TOC title that points at it."""
    titles: dict[str, str] = {}
    for entry in toc or []:
        if isinstance(entry, tuple):  # (Section, children)
            section, children = entry
            _add_toc_title(titles, section)
            for href, title in _toc_titles(children).items():
                titles.setdefault(href, title)
        else:
            _add_toc_title(titles, entry)
    return titles


def _add_toc_title(titles: dict[str, str], entry: Any) -> None:
    href = str(getattr(entry, "href", "") or "").split("#", 1)[0]
    title = " ".join(str(getattr(entry, "title", "") or "").split())
    if href and title:
        titles.setdefault(href, title)


def _dublin_core(book: epub.EpubBook) -> dict[str, str]:
    """Title, creator, language, … from the OPF metadata; several values are joined with ", "."""
    metadata: dict[str, str] = {}
    fields = {
        "title": "title",
        "creator": "author",
        "language": "language",
        "publisher": "publisher",
        "date": "published",
        "subject": "subjects",
        "identifier": "identifier",
    }
    for dc_name, key in fields.items():
        values = [" ".join(str(value).split()) for value, _attrs in book.get_metadata("DC", dc_name)]
        values = [value for value in values if value]
        if values:
            metadata[key] = ", ".join(values)
    description = book.get_metadata("DC", "description")
    if description:
        # calibre stores the AO3 work summary as HTML in dc:description.
        metadata["summary"] = paragraph_text(BeautifulSoup(str(description[0][0]), "lxml"))
    return metadata
