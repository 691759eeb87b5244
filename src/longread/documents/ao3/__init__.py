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

from longread.documents.ao3.chapters import RemovedNotes, count_afterword, extract_chapters
from longread.documents.ao3.filter import AO3Filter
from longread.documents.ao3.html_paragraphs import paragraph_text, paragraphs
from longread.documents.ao3.languages import UNKNOWN_LANGUAGE, normalise_language, primary_language
from longread.documents.ao3.preface import parse_preface
from longread.documents.ao3.read import AO3_HTML_SOURCE, build_ao3_book, read_ao3_html

__all__ = [
    "AO3_HTML_SOURCE",
    "UNKNOWN_LANGUAGE",
    "AO3Filter",
    "RemovedNotes",
    "build_ao3_book",
    "count_afterword",
    "extract_chapters",
    "normalise_language",
    "paragraph_text",
    "paragraphs",
    "parse_preface",
    "primary_language",
    "read_ao3_html",
]
