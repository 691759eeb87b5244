"""Style-change sources: works by named authors, cut into the paragraphs a document may draw.

Any source longread reads gives works (Books): Project Gutenberg books (the
author from the licence header), AO3 works JSONL (author, ``fandom`` and
``relationship`` metadata, as :mod:`longread.documents.jsonl_works` reads it),
AO3 HTML, EPUB. A paragraph is a blank-line-separated block of a chapter's text
(chapter headings are never in it), its lines joined by single spaces so that
it fits on one line of a PAN problem. Skipped, and counted per work:

- ``heading``: no lower-case letter (a heading, ``* * *``, ``THE END``);
- ``note``: wholly in square brackets (``[Illustration: …]``, transcriber's notes);
- ``short``: fewer than ``min_words`` words;
- ``duplicate``: the same text as a paragraph kept before (epigraphs, refrains,
  a work given twice), so no text is ever drawn twice.

With ``typography="plain"`` (the default) each kept paragraph's typography is
made uniform: curly quotes → straight, en dash → ``-``, em dash → ``--``, ellipsis
→ ``...``, no-break space → space, ``_emphasis_`` underscores dropped. In
Gutenberg these come from the transcriber's edition, not the author (about half of
the shared novels use curly quotes), and would let a model find author changes
from one character; ``typography="keep"`` keeps the text as written.

A work is dropped (with the reason) when it cannot be read, names no single
author (empty, ``Unknown``, ``Anonymous``, ``Various``), repeats a work id, or
keeps no paragraph.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from longread.benchmarks.muld.builders.report import BuildReport
from longread.documents.book import Book
from longread.documents.reader import ReadOptions, read_bytes_source, read_path
from longread.documents.sources import iter_sources
from longread.errors import BadInputError
from longread.text.tokenizers import NamedTokenizer

MIN_PARAGRAPH_WORDS = 20
NO_AUTHOR = frozenset({"", "unknown", "anonymous", "various", "anon", "anon."})
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
TYPOGRAPHY = ("plain", "keep")
_PLAIN = str.maketrans(
    {
        "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"',
        "\u2013": "-", "\u2014": "--", "\u2026": "...", "\u00a0": " ",
    }
)  # fmt: skip
_EMPHASIS = re.compile(r"(?<!\w)_([^_]+?)_(?!\w)")


def plain_typography(text: str) -> str:
    """The ``typography="plain"`` rule of the module docstring."""
    return _EMPHASIS.sub(r"\1", text.translate(_PLAIN))


@dataclass(frozen=True)
class Paragraph:
    work: str
    author: str
    chapter: int
    """0-based chapter of the work."""
    index: int
    """0-based blank-line-separated block of that chapter's text (skipped blocks count too)."""
    text: str
    tokens: int

    def source(self) -> dict[str, object]:
        return {"work": self.work, "author": self.author, "chapter": self.chapter, "paragraph": self.index}


@dataclass
class Work:
    id: str
    author: str
    title: str
    source: str
    relationships: tuple[str, ...]
    fandoms: tuple[str, ...]
    paragraphs: list[Paragraph] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.paragraphs)

    def pool(self, pool_by: str) -> str | None:
        """The pool a work's paragraphs share documents with (``None``: it has no such tag).

        ``auto``: its first relationship, else its first fandom, else ``all`` (Gutenberg);
        ``relationship`` / ``fandom``: the first such tag; ``all``: one pool for the corpus.
        """
        if pool_by == "all":
            return "all"
        if pool_by == "relationship":
            return self.relationships[0] if self.relationships else None
        if pool_by == "fandom":
            return self.fandoms[0] if self.fandoms else None
        return (self.relationships or self.fandoms or ("all",))[0]

    def summary(self) -> dict[str, object]:
        return {
            "author": self.author,
            "title": self.title,
            "source": self.source,
            "paragraphs": len(self.paragraphs),
            "tokens": self.tokens,
            "skipped_paragraphs": dict(sorted(self.skipped.items())),
        }


def tags(book: Book, key: str) -> tuple[str, ...]:
    """AO3 tag lists are comma-joined (AO3 tags cannot hold commas)."""
    return tuple(tag.strip() for tag in book.metadata.get(key, "").split(",") if tag.strip())


def paragraph_kind(text: str, min_words: int) -> str | None:
    """Why a paragraph is skipped (see the module rules), or ``None`` to keep it."""
    if not any(ch.islower() for ch in text):
        return "heading"
    if text.startswith("[") and text.endswith("]"):
        return "note"
    if len(text.split()) < min_words:
        return "short"
    return None


def cut_paragraphs(
    book: Book,
    author: str,
    tokenizer: NamedTokenizer,
    min_words: int,
    seen: set[str],
    typography: str = "plain",
) -> tuple[list[Paragraph], Counter[str]]:
    """The usable paragraphs of a book and how many of each skip kind; ``seen`` collects kept texts."""
    kept: list[Paragraph] = []
    skipped: Counter[str] = Counter()
    for chapter_index, chapter in enumerate(book.chapters):
        blocks = _BLANK_LINE.split(chapter.text.replace("\r\n", "\n"))
        for index, block in enumerate(blocks):
            text = " ".join(block.split())
            if typography == "plain":
                text = plain_typography(text)
            if not text:
                continue
            kind = paragraph_kind(text, min_words) or ("duplicate" if text in seen else None)
            if kind is not None:
                skipped[kind] += 1
                continue
            seen.add(text)
            kept.append(Paragraph(book.id, author, chapter_index, index, text, tokenizer.count(text)))
    return kept, skipped


def _books(sources: Sequence[Path], report: BuildReport) -> Iterator[Book]:
    for source in iter_sources(sources):
        items = (
            read_path(source.path, ReadOptions())
            if source.path is not None
            else read_bytes_source(source.label, source.data or b"", ReadOptions())
        )
        errors: list[BadInputError] = []
        books = 0
        for item in items:
            if isinstance(item, BadInputError):
                errors.append(item)
            else:
                books += 1
                yield item
        if errors and not books and len(errors) > 1:
            # A JSONL that is not a works file (a manifest beside the books): one entry, not one per line.
            report.drop(
                source.label, f"unreadable: no line is a work ({len(errors)} lines; first: {errors[0]})"
            )
            continue
        for error in errors:
            report.drop(error.item or source.label, f"unreadable: {error}")


def read_works(
    sources: Sequence[Path],
    tokenizer: NamedTokenizer,
    report: BuildReport,
    min_words: int = MIN_PARAGRAPH_WORDS,
    typography: str = "plain",
) -> list[Work]:
    """Every usable work of the sources, in source order; what is dropped goes to ``report``."""
    works: list[Work] = []
    ids: set[str] = set()
    seen: set[str] = set()
    for book in _books(sources, report):
        label = f"{book.id} ({book.source})"
        author = " ".join(book.author.split())
        if author.casefold() in NO_AUTHOR:
            report.drop(label, f"no single author: {book.author!r}", title=book.title)
            continue
        if book.id in ids:
            report.drop(label, f"duplicate work id: {book.id} was read before", title=book.title)
            continue
        ids.add(book.id)
        paragraphs, skipped = cut_paragraphs(book, author, tokenizer, min_words, seen, typography)
        work = Work(
            book.id,
            author,
            book.title,
            book.source,
            tags(book, "relationship"),
            tags(book, "fandom"),
            paragraphs,
            skipped,
        )
        if not paragraphs:
            report.drop(label, f"no usable paragraph: {dict(skipped)}", title=book.title)
            continue
        works.append(work)
    return works
