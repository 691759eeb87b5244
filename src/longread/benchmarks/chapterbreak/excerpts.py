"""A built ChapterBreak file as the text it shows of each book (``longread probe memory --data``).

Per book: the prefixes, joined where they overlap (each instance's prefix is the book's text from
``prefix_start_char`` to ``boundary_char``), as pieces; and every break asked about — the prefix and the
true next chapter's opening as the file holds them — once, however many variants ask it.
"""

from __future__ import annotations

from pathlib import Path

from longread.benchmarks.chapterbreak.io import iter_instances
from longread.documents.book import Book, Chapter
from longread.documents.excerpts import BookExcerpts


def chapterbreak_excerpts(path: Path) -> list[BookExcerpts]:
    """Every book of the file, in the order it first appears."""
    spans: dict[str, list[tuple[int, str]]] = {}
    loose: dict[str, list[str]] = {}
    """Prefixes whose place in the book is not known (files converted from the official layout)."""
    breaks: dict[str, dict[tuple[str, str], None]] = {}
    titles: dict[str, str] = {}
    for instance in iter_instances(path):
        book = instance.book_id
        titles.setdefault(book, instance.book_title or book)
        spans.setdefault(book, [])
        if instance.prefix_start_char is None:
            loose.setdefault(book, []).append(instance.prefix)
        else:
            spans[book].append((instance.prefix_start_char, instance.prefix))
        breaks.setdefault(book, {})[(instance.prefix, instance.gold)] = None
    return [
        BookExcerpts(
            Book(
                id=book,
                title=titles[book],
                author="",
                language="en",
                source=str(path),
                chapters=tuple(
                    Chapter(heading="", text=text)
                    for text in [*merged_pieces(spans[book]), *dict.fromkeys(loose.get(book, []))]
                ),
            ),
            tuple(breaks[book]),
            source=str(path),
        )
        for book in spans
    ]


def merged_pieces(spans: list[tuple[int, str]]) -> list[str]:
    """Texts at character offsets joined where they overlap or touch and agree; apart where they do not."""
    pieces: list[tuple[int, str]] = []
    for start, text in sorted(set(spans)):
        if pieces:
            first, joined = pieces[-1]
            overlap = first + len(joined) - start
            shared = min(overlap, len(text))
            if overlap >= 0 and joined[start - first : start - first + shared] == text[:shared]:
                if len(text) > overlap:
                    pieces[-1] = (first, joined + text[overlap:])
                continue
        pieces.append((start, text))
    return [text for _, text in pieces]
