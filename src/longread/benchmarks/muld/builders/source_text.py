"""Text of a downloaded source file as the MuLD builders read it: plain text or an HTML page.

Rules:
- A file is HTML when its first 2,000 bytes hold ``<html``, ``<!doctype html``,
  ``<pre`` or ``<body`` (case-insensitive); NarrativeQA's movie scripts and
  IMSDb's scripts are web pages, Gutenberg books are plain text.
- Plain text is decoded as UTF-8, or as the charset a Gutenberg header declares
  (:func:`longread.files.decode_text`); anything else is an error naming the
  file and byte offset.
- HTML is decoded as a browser does (BOM, ``<meta charset>``, else a guess
  between UTF-8 and windows-1252 — bs4's ``UnicodeDammit``), then turned into
  its visible text: ``<script>``/``<style>`` dropped, entities resolved, line
  breaks kept (``<br>`` and block ends become newlines). With ``prefer_pre``
  the longest ``<pre>`` block is the text when there is one (IMSDb puts the
  whole script in one ``<pre>``; the rest of the page is navigation).
- Line ends become ``\\n``; trailing spaces on lines and runs of 3+ blank
  lines are squeezed (HTML layout whitespace, not the author's).
"""

from __future__ import annotations

import gzip
import re
import warnings
from pathlib import Path

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, Tag, UnicodeDammit

from longread.errors import BadInputError
from longread.files import decode_text, read_bytes

_HTML_SIGNS = re.compile(rb"<(?:html|!doctype\s+html|pre|body)\b", re.IGNORECASE)
_BLOCK_TAGS = ("p", "div", "br", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6", "td", "table")
_TRAILING_SPACE = re.compile(r"[ \t\r\f\v]+\n")
_MANY_BLANKS = re.compile(r"\n{4,}")


def looks_like_html(data: bytes) -> bool:
    return _HTML_SIGNS.search(data[:2000]) is not None


def decode_html(data: bytes, path: str | Path) -> str:
    """An HTML page's characters (BOM, declared charset, else UTF-8 or windows-1252)."""
    dammit = UnicodeDammit(data, ["utf-8", "windows-1252"], is_html=True)
    if dammit.unicode_markup is None:
        raise BadInputError(path, "cannot decode this HTML page", "re-download it or convert it to UTF-8")
    return dammit.unicode_markup


def html_to_text(markup: str, *, prefer_pre: bool = False) -> str:
    """The visible text of an HTML page (see the module rules)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        soup = BeautifulSoup(markup, "lxml")
    for hidden in soup.find_all(["script", "style", "noscript"]):
        hidden.decompose()
    scope: BeautifulSoup | Tag = soup
    if prefer_pre:
        blocks = soup.find_all("pre")
        if blocks:
            scope = max(blocks, key=lambda block: len(block.get_text()))
    for tag in scope.find_all(_BLOCK_TAGS):
        if tag.name == "br":
            tag.replace_with("\n")
        else:
            tag.append("\n")
    return tidy_text(scope.get_text())


def tidy_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\xa0", " ")
    text = _TRAILING_SPACE.sub("\n", text + "\n")
    return _MANY_BLANKS.sub("\n\n\n", text).strip("\n")


def read_source_text(path: str | Path, *, prefer_pre: bool = False) -> tuple[str, str]:
    """(text, "html" or "text") of a downloaded story or script; bad files raise :class:`BadInputError`."""
    data = read_bytes(path)
    if data[:2] == b"\x1f\x8b":  # a gzipped download without the .gz suffix (Gutenberg sometimes)
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise BadInputError(
                path, f"gzip data that cannot be decompressed ({exc})", "download it again"
            ) from None
    if not data.strip():
        raise BadInputError(path, "file is empty", "download it again")
    if data[:5] == b"%PDF-":
        raise BadInputError(path, "a PDF, not text or HTML", "convert it to text (pdftotext) first")
    if looks_like_html(data):
        return html_to_text(decode_html(data, path), prefer_pre=prefer_pre), "html"
    return decode_text(data, path), "text"
