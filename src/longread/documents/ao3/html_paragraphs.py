"""HTML → paragraphs, the way a browser lays the text out.

Rule: every block element ends a paragraph, ``<br>`` is a line break inside one,
whitespace is collapsed, and scripts, styles and empty spacers give nothing.
Used by the AO3 HTML and EPUB readers.
"""

from __future__ import annotations

import re

from bs4 import Tag
from bs4.element import NavigableString

# Elements that end a paragraph; everything else is inline and flows into the current one.
_BLOCK_TAGS = frozenset(
    {
        *("address", "article", "aside", "blockquote", "center", "dd", "div", "dl", "dt"),
        *("figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr"),
        *("li", "main", "nav", "ol", "p", "pre", "section", "table", "tbody", "td", "tfoot"),
        *("th", "thead", "tr", "ul"),
    }
)
_SKIPPED_TAGS = frozenset({"script", "style", "head", "title", "noscript"})


def paragraphs(element: Tag) -> list[str]:
    """The element's text as paragraphs: one per block element, ``<br>`` kept as a line break.

    Whitespace inside a paragraph is collapsed the way a browser does; empty
    paragraphs (``<p>&nbsp;</p>`` spacers, ``<hr>``) are dropped.
    """
    found: list[str] = []
    buffer: list[str] = []
    _collect(element, buffer, found)
    _flush(buffer, found)
    return found


def paragraph_text(element: Tag) -> str:
    return "\n\n".join(paragraphs(element))


def _collect(element: Tag, buffer: list[str], found: list[str]) -> None:
    for child in element.children:
        if isinstance(child, Tag):
            name = child.name.lower()
            if name in _SKIPPED_TAGS:
                continue
            if name == "br":
                buffer.append("\n")
            elif name in _BLOCK_TAGS:
                _flush(buffer, found)
                _collect(child, buffer, found)
                _flush(buffer, found)
            else:
                _collect(child, buffer, found)
        # Comments, doctypes and CDATA are NavigableString subclasses too; only plain text counts.
        elif type(child) is NavigableString:
            buffer.append(re.sub(r"\s+", " ", str(child)))


def _flush(buffer: list[str], found: list[str]) -> None:
    if not buffer:
        return
    lines = (" ".join(line.split()) for line in "".join(buffer).split("\n"))
    text = "\n".join(line for line in lines if line)
    if text:
        found.append(text)
    buffer.clear()
