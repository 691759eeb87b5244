"""The MuLD summarisation baseline's document side: a thesis cut into sections, front/back matter skipped.

VLSP theses come as text converted from arXiv LaTeX, where every heading is a
Markdown-style line ``#``…``######`` + title (``## Chapter 2 Basics``, ``### 2.1
Text-based methods``, ``###### Proof.``) and math is ``@xmath``. How deep the
chapter level sits varies from thesis to thesis (``#`` … ``###``), so it is
measured per document. The rules:

1. A heading is a line ``#{1,6} title``. Level-6 headings (``######``) are LaTeX
   paragraphs and theorem-like blocks (Proof, Lemma 3.2, Definition …) in this
   conversion: *minor*, they never start a section — unless they are one of the
   skipped kinds below (``###### Contents`` is common).
2. A heading is *skipped* by kind when its title, after a leading
   ``Chapter N`` / ``Appendix X`` / section number, matches: contents,
   list of figures, list of tables, other lists (symbols, abbreviations,
   algorithms, publications …), acknowledgements, dedication, references /
   bibliography, index, glossary / nomenclature. A skipped section runs from its
   heading to the next non-minor heading of *any* level (front matter has no
   subsections; a level-1 ``# Acknowledgements`` must not swallow the thesis).
3. The *section level* is the most common level of ``Chapter N`` headings (ties
   to the shallower); without those, of headings numbered with a single integer
   (``## 3 Outline``); without those, the shallowest non-minor level.
4. A section starts at every non-minor heading at or above the section level
   (parts, chapters, appendices, unnumbered top headings such as ``Preamble``),
   at every skipped heading, and at the first non-minor heading after a skipped
   section; it ends where the next one starts. Text before the first heading is a
   section with an empty title (kind ``front``) when it is not blank.
5. A kept section whose body is blank (``# Part I`` followed at once by
   ``### Chapter 2``) is merged into the section after it; titles are joined
   with `` / ``.

Sections cover the document exactly, skipped ones included (tested). The VLSP
texts carry no bibliography (the arXiv conversion drops it); the rule is there
for documents that do.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Final

from longread.benchmarks.muld.tasks.chunks import KeptSpan, Selection
from longread.text.tokenizers import NamedTokenizer

HEADING: Final = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*$", re.MULTILINE)
MINOR_LEVEL: Final[int] = 6

SKIP_KINDS: Final[dict[str, re.Pattern[str]]] = {
    "contents": re.compile(r"^(table of )?contents\b"),
    "list-of-figures": re.compile(r"^list of (figures|illustrations|plots)\b"),
    "list-of-tables": re.compile(r"^list of tables\b"),
    "list-of-other": re.compile(r"^(list of \w+|abbreviations|acronyms)\b"),
    "acknowledgements": re.compile(r"^acknowledge?ments?\b"),
    "dedication": re.compile(r"^dedication\b"),
    "references": re.compile(r"^(references|bibliography|works cited|literature cited|cited literature)\b"),
    "index": re.compile(r"^(subject |author )?index$"),
    "glossary": re.compile(r"^(glossary|nomenclature)\b|\bglossary\b"),
}
"""Heading kinds skipped by default: front and back matter that says nothing a summary needs."""

DEFAULT_SKIP: Final[frozenset[str]] = frozenset(SKIP_KINDS)
_NUMBER_PREFIX: Final = re.compile(
    r"^(chapter\s+\w+[.:]?\s*|appendix[\s-]+\w+[.:]?\s*|part\s+\w+[.:]?\s*|[\d.]+\s+|[a-z]\.[\d.]*\s+)",
    re.IGNORECASE,
)
_CHAPTER: Final = re.compile(r"^chapter\s+\w+", re.IGNORECASE)
_SINGLE_NUMBER: Final = re.compile(r"^\d+\.?\s+\S")


@dataclass(frozen=True)
class Heading:
    start: int
    """Offset of the heading line."""
    body_start: int
    """Offset just after the heading line."""
    level: int
    title: str


@dataclass(frozen=True)
class Section:
    """``document[start:end]`` (heading line included); ``kind`` is ``body``, ``front`` or a skipped kind."""

    title: str
    level: int
    start: int
    end: int
    kind: str
    body_start: int

    @property
    def skipped(self) -> bool:
        return self.kind not in ("body", "front")


def find_headings(document: str) -> list[Heading]:
    return [
        Heading(match.start(), min(match.end() + 1, len(document)), len(match.group(1)), match.group(2))
        for match in HEADING.finditer(document)
    ]


def skip_kind(title: str) -> str | None:
    """The skipped kind a heading title names (rule 2), or None."""
    bare = _NUMBER_PREFIX.sub("", title.strip().lower(), count=1).strip()
    for kind, pattern in SKIP_KINDS.items():
        if pattern.search(bare):
            return kind
    return None


def section_level(headings: Iterable[Heading]) -> int | None:
    """Rule 3; None when the document has no non-minor heading."""
    major = [h for h in headings if h.level < MINOR_LEVEL and h.title and skip_kind(h.title) is None]
    for pattern in (_CHAPTER, _SINGLE_NUMBER):
        levels = Counter(h.level for h in major if pattern.match(h.title))
        if levels:
            return min(levels, key=lambda level: (-levels[level], level))
    return min((h.level for h in major), default=None)


def find_sections(document: str, skip: frozenset[str] = DEFAULT_SKIP) -> list[Section]:
    """All sections of ``document`` in order, skipped ones included, covering it exactly (rules 1–5)."""
    headings = find_headings(document)
    level = section_level(headings)
    starts: list[tuple[Heading, str]] = []
    after_skipped = False
    for heading in headings:
        kind = skip_kind(heading.title) if heading.title else None
        if kind is not None and kind in skip:
            starts.append((heading, kind))
            after_skipped = True
            continue
        if heading.level >= MINOR_LEVEL or not heading.title:
            continue
        if after_skipped or (level is not None and heading.level <= level):
            starts.append((heading, "body"))
            after_skipped = False
    sections: list[Section] = []
    first = starts[0][0].start if starts else len(document)
    if document[:first].strip():
        sections.append(Section("", 0, 0, first, "front", 0))
    # Otherwise blank text before the first heading belongs to the first section.
    for number, (heading, kind) in enumerate(starts):
        start = 0 if number == 0 and not sections else heading.start
        end = starts[number + 1][0].start if number + 1 < len(starts) else len(document)
        sections.append(Section(heading.title, heading.level, start, end, kind, heading.body_start))
    return _merge_blank(document, sections)


def _merge_blank(document: str, sections: list[Section]) -> list[Section]:
    """Rule 5: a kept section with a blank body joins the kept section right after it."""
    merged: list[Section] = []
    pending: Section | None = None
    for section in sections:
        if pending is not None:
            if section.skipped:
                merged.append(pending)
            else:
                section = replace(section, title=f"{pending.title} / {section.title}", start=pending.start)
            pending = None
        blank = not document[section.body_start : section.end].strip()
        if not section.skipped and section.kind != "front" and blank:
            pending = section
        else:
            merged.append(section)
    if pending is not None:
        merged.append(pending)
    return merged


def by_sections(
    document: str, tokenizer: NamedTokenizer, max_tokens: int, *, skip: frozenset[str] = DEFAULT_SKIP
) -> Selection:
    """The sections to summarise one by one, each cut to its first ``max_tokens`` tokens.

    Kept spans carry the section title as ``label`` and its full length as
    ``full_tokens``; every skipped section is listed in ``notes`` with its kind.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    sections = find_sections(document, skip)
    kept: list[KeptSpan] = []
    notes: list[str] = []
    for index, section in enumerate(sections):
        if section.skipped:
            notes.append(f"skipped {section.kind}: {section.title!r} (chars {section.start}-{section.end})")
            continue
        text = document[section.start : section.end]
        head, n_tokens, cut = tokenizer.head(text, max_tokens)
        full = tokenizer.count(text) if cut else n_tokens
        end = section.start + len(head)
        kept.append(
            KeptSpan(
                index=index,
                start=section.start,
                end=end,
                n_tokens=n_tokens,
                full_tokens=full,
                label=section.title,
            )
        )
    if not kept:
        notes.append("no section left to summarise")
    return Selection(
        method="sections",
        tokenizer=tokenizer.name,
        document_chars=len(document),
        document_tokens=tokenizer.count(document),
        n_units=len(sections),
        kept=tuple(kept),
        settings={"max_tokens": max_tokens, "skip": ",".join(sorted(skip))},
        notes=tuple(notes),
    )


def first_tokens(
    document: str, tokenizer: NamedTokenizer, n: int, *, after_front_matter: bool = False
) -> Selection:
    """The first ``n`` tokens of ``document`` — or, with ``after_front_matter``, of the text from the
    first kept section on (skipping a leading acknowledgements/contents/list-of-figures block)."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    start = 0
    notes: list[str] = []
    if after_front_matter:
        leading = _leading_skipped(find_sections(document))
        if leading:
            start = leading[-1].end
            notes.append(
                "skipped front matter: " + ", ".join(s.kind for s in leading) + f" (chars 0-{start})"
            )
    rest = document[start:]
    head, n_tokens, cut = tokenizer.head(rest, n)
    return Selection(
        method="first-tokens",
        tokenizer=tokenizer.name,
        document_chars=len(document),
        document_tokens=tokenizer.count(document),
        n_units=1,
        kept=(
            KeptSpan(
                index=0,
                start=start,
                end=start + len(head),
                n_tokens=n_tokens,
                full_tokens=tokenizer.count(rest) if cut else n_tokens,
            ),
        ),
        settings={"max_tokens": n, "after_front_matter": after_front_matter},
        notes=tuple(notes),
    )


def _leading_skipped(sections: list[Section]) -> list[Section]:
    leading: list[Section] = []
    for section in sections:
        if not section.skipped:
            break
        leading.append(section)
    return leading
