"""AO3 chapters from a download's ``div#chapters``, with notes and summaries cut out.

Rule: a chapter is a ``div.meta.group`` heading plus the first text ``div.userstuff``
after it (a one-chapter work is its single ``div.userstuff``); chapter summaries,
notes, end notes, inline author's notes and the work's afterword are removed from
the story text and counted in ``RemovedNotes`` so ``Book.notes`` says what was dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bs4 import BeautifulSoup, Tag

from longread.documents.ao3.html_paragraphs import paragraph_text, paragraphs
from longread.documents.book import Chapter

# Containers of non-story text inside div#chapters, in every markup AO3 has used.
_NOTES_SELECTORS = (
    "div.summary",
    "div.notes",
    "div.end.notes",
    "div.endnote-link",
    "div.meta[id^=endnotes]",
)
# A paragraph that opens an author's note written into the chapter text itself.
_INLINE_AUTHOR_NOTE = re.compile(
    r"^\s*(author(?:['’]?s)?['’]?\s+notes?|a\s*/\s*n)\s*([:.\-–—)]|$)", re.IGNORECASE
)


@dataclass
class RemovedNotes:
    """What was cut out of the story text, for ``Book.notes``."""

    blocks: int = 0
    characters: int = 0
    kinds: set[str] = field(default_factory=set)

    def add(self, kind: str, element: Tag) -> None:
        self.blocks += 1
        self.characters += len(paragraph_text(element))
        self.kinds.add(kind)

    def describe(self) -> str:
        kinds = ", ".join(sorted(self.kinds))
        return f"removed {self.blocks} notes/summary blocks ({self.characters:,} characters: {kinds})"


def extract_chapters(chapters_div: Tag, removed: RemovedNotes) -> list[Chapter]:
    """The chapters inside an AO3 ``div#chapters``, with notes and summaries cut out.

    Modifies ``chapters_div`` (the notes blocks are removed from the tree).
    """
    _remove_notes_blocks(chapters_div, removed)
    headings = [h for h in chapters_div.find_all("h2", class_="heading") if _in_meta_group(h)]
    if not headings:
        return _single_chapter(chapters_div, removed)
    # Document order decides which text div belongs to which heading: the first one after it.
    position = {id(node): index for index, node in enumerate(chapters_div.descendants)}
    bodies = [div for div in chapters_div.find_all("div", class_="userstuff") if not _inside_text(div)]
    chapters: list[Chapter] = []
    for index, heading in enumerate(headings):
        start = position[id(heading)]
        end = position[id(headings[index + 1])] if index + 1 < len(headings) else len(position)
        body = next((div for div in bodies if start < position[id(div)] < end), None)
        text = _story_text(body, removed) if body is not None else ""
        chapters.append(Chapter(heading=" ".join(heading.get_text(" ").split()), text=text))
    return chapters


def _in_meta_group(heading: Tag) -> bool:
    parent = heading.parent
    classes = _classes(parent) if isinstance(parent, Tag) else []
    return "meta" in classes and "group" in classes


def _inside_text(div: Tag) -> bool:
    """A userstuff div nested in another one is part of that chapter's text, not a chapter of its own."""
    for parent in div.parents:
        if parent.get("id") == "chapters":
            return False
        if parent.name == "div" and "userstuff" in _classes(parent):
            return True
    return False


def _classes(element: Tag) -> list[str]:
    value = element.get("class")
    if value is None:
        return []
    return value.split() if isinstance(value, str) else list(value)


def _remove_notes_blocks(chapters_div: Tag, removed: RemovedNotes) -> None:
    for selector in _NOTES_SELECTORS:
        for block in chapters_div.select(selector):
            # Already gone with an enclosing block, or the author's own markup inside the story
            # (work skins let authors use any class name, "notes" included).
            if block.decomposed or _inside_text(block):
                continue
            if "endnote-link" not in _classes(block):
                removed.add(_notes_kind(_block_label(block), block), block)
            block.decompose()
    # In a meta group everything but the heading and the text (when nested there) is summary,
    # notes, their labels ("<p>Chapter Notes</p>"), or a co-author byline.
    for group in chapters_div.select("div.meta.group"):
        label = ""
        for child in list(group.find_all(recursive=False)):
            if child.name == "h2" or (child.name == "div" and "userstuff" in _classes(child)):
                continue
            if child.name == "p":
                label = " ".join(child.get_text(" ").split())
            elif child.name == "blockquote" or child.select_one("blockquote"):
                removed.add(_notes_kind(label, child), child)
            child.decompose()


def _block_label(block: Tag) -> str:
    """The label of a notes block: its own heading (h3 "Notes for the Chapter") or the <p> before it."""
    label = block.find(["h3", "h4", "p"])
    if not isinstance(label, Tag) or label.find_parent("blockquote") is not None:
        label = block.find_previous_sibling("p")
    return " ".join(label.get_text(" ").split()) if isinstance(label, Tag) else ""


def _notes_kind(label: str, block: Tag) -> str:
    label = label.casefold()
    classes = _classes(block)
    if "summary" in classes or "summary" in label:
        return "summary"
    if "end" in classes or "end notes" in label or str(block.get("id") or "").startswith("endnotes"):
        return "end notes"
    return "notes"


def _single_chapter(chapters_div: Tag, removed: RemovedNotes) -> list[Chapter]:
    bodies = chapters_div.find_all("div", class_="userstuff")
    # Text straight inside div#chapters (a hand-edited or old download) is the whole work.
    scope = bodies[0] if len(bodies) == 1 else chapters_div
    text = _story_text(scope, removed)
    return [Chapter(heading="", text=text)] if text else []


def _story_text(body: Tag, removed: RemovedNotes) -> str:
    kept: list[str] = []
    for paragraph in paragraphs(body):
        if _INLINE_AUTHOR_NOTE.match(paragraph):
            removed.blocks += 1
            removed.characters += len(paragraph)
            removed.kinds.add("author's note")
            continue
        kept.append(paragraph)
    return "\n\n".join(kept)


def count_afterword(soup: BeautifulSoup | Tag, removed: RemovedNotes) -> None:
    """End notes live outside the chapters; they are counted so the record of what was dropped is complete."""
    afterword = soup.find("div", id="afterword")
    if isinstance(afterword, Tag):
        for block in afterword.find_all("blockquote"):
            removed.add("work end notes", block)
