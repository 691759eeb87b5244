"""AO3 works as the site's "Download → HTML" button writes them, and the ChapterBreak AO3 filter.

:func:`read_ao3_html` reads a download into a book (preface, chapters, author's notes taken out and
counted); :class:`AO3Filter` keeps the works ChapterBreak's AO3 split keeps. The page layout and the
rules are in :mod:`.read`.
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
