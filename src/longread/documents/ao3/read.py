"""AO3 works as the site's "Download → HTML" button writes them, and the ChapterBreak AO3 filter.

The download is one XHTML page (otwarchive ``downloads/show.html.erb``)::

    <div id="preface"> … <dl class="tags"><dt>Rating:</dt><dd>…</dd> … </dl>
        <h1>Title</h1> <div class="byline">by <a>author</a></div> … </div>
    <div id="chapters" class="userstuff">
        <div class="meta group"><h2 class="heading">Chapter 1: Title</h2>
            <p>Chapter Summary</p><blockquote class="userstuff">…</blockquote>
            <p>Chapter Notes</p><blockquote class="userstuff">…</blockquote></div>
        <div class="userstuff"> … chapter text … </div>
        <div class="meta" id="endnotes1"><p>Chapter End Notes</p><blockquote>…</blockquote></div>
        …
    </div>
    <div id="afterword"> … end notes … </div>

A one-chapter work has no ``meta group``: its text sits in one ``div.userstuff``.
Older downloads and the work page label the blocks "Summary for the Chapter" /
"Notes for the Chapter" or wrap them in ``div.summary`` / ``div.notes``; all of
those are removed too, because ChapterBreak scores continuations of *story* text.

The work is split by concern: ``html_paragraphs`` (HTML → paragraphs),
``ao3_languages`` (language names → BCP 47), ``ao3_preface`` (work metadata),
``ao3_chapters`` (chapters with notes removed) and ``ao3_filter`` (the ChapterBreak
filter). This module reads a whole download into a Book and re-exports every name
callers import from ``longread.documents.ao3``.
"""

from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup, Tag

from longread.documents.ao3.chapters import RemovedNotes, count_afterword, extract_chapters
from longread.documents.ao3.languages import (
    _LANGUAGE_CODES,
    _LANGUAGE_TAG,
    UNKNOWN_LANGUAGE,
    normalise_language,
    primary_language,
)
from longread.documents.ao3.preface import _WORK_ID, parse_preface
from longread.documents.book import Book, Chapter
from longread.errors import BadInputError, NoChaptersError
from longread.files import decode_text, read_bytes, strip_compression_suffix

__all__ = [
    "AO3_HTML_SOURCE",
    "build_ao3_book",
    "read_ao3_html",
]

AO3_HTML_SOURCE = "ao3-html"


def read_ao3_html(path: str | Path) -> Book:
    """Read one AO3 "Download → HTML" file into a Book (chapters in order, notes removed)."""
    path = Path(path)
    soup = BeautifulSoup(decode_text(read_bytes(path), path), "lxml")
    chapters_div = soup.find("div", id="chapters")
    if not isinstance(chapters_div, Tag):
        raise BadInputError(
            path,
            'no <div id="chapters"> holding the work\'s text (a truncated download, or not AO3 HTML)',
            "download the work again from AO3 with Download → HTML",
        )
    metadata = parse_preface(soup)
    removed = RemovedNotes()
    chapters = extract_chapters(chapters_div, removed)
    count_afterword(soup, removed)
    if not any(chapter.text for chapter in chapters):
        raise NoChaptersError(
            path,
            "the chapters container holds no text",
            "download the work again from AO3 with Download → HTML",
        )
    return build_ao3_book(path, metadata, chapters, removed, AO3_HTML_SOURCE)


def build_ao3_book(
    path: Path, metadata: dict[str, str], chapters: list[Chapter], removed: RemovedNotes, source: str
) -> Book:
    """The Book for an AO3 work; shared by the HTML and EPUB readers."""
    notes: list[str] = []
    if removed.blocks:
        notes.append(removed.describe())
    empty = [chapter.heading or str(i + 1) for i, chapter in enumerate(chapters) if not chapter.text]
    if empty:
        notes.append(f"chapters without text: {', '.join(empty)}")
    language = normalise_language(metadata.get("language", ""))
    if language == UNKNOWN_LANGUAGE:
        notes.append("no language in the work's metadata")
    elif primary_language(language) not in _LANGUAGE_CODES.values() and not _LANGUAGE_TAG.match(language):
        notes.append(f"language {language!r} is not in the AO3 language table; kept as written")
    url = metadata.get("url", "")
    match = _WORK_ID.search(url)
    stem = strip_compression_suffix(path.name).rsplit(".", 1)[0]
    return Book(
        id=match.group(1) if match else stem,
        title=metadata.get("title", stem),
        author=metadata.get("author", ""),
        language=language,
        source=source,
        chapters=tuple(chapters),
        metadata=metadata,
        notes=tuple(notes),
    )
