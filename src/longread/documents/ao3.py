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
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from bs4 import BeautifulSoup, Tag
from bs4.element import NavigableString

from longread.documents.book import Book, Chapter
from longread.errors import BadInputError, NoChaptersError
from longread.files import decode_text, read_bytes, strip_compression_suffix

AO3_HTML_SOURCE = "ao3-html"
UNKNOWN_LANGUAGE = "und"  # BCP 47 "undetermined"

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
_WORK_ID = re.compile(r"/works/(\d+)")

# dt label (singular or plural, without the colon) → metadata key.
_TAG_KEYS = {
    "rating": "rating",
    "ratings": "rating",
    "archive warning": "archive_warning",
    "archive warnings": "archive_warning",
    "category": "category",
    "categories": "category",
    "fandom": "fandom",
    "fandoms": "fandom",
    "relationship": "relationship",
    "relationships": "relationship",
    "character": "characters",
    "characters": "characters",
    "additional tag": "additional_tags",
    "additional tags": "additional_tags",
    "freeform": "additional_tags",
    "language": "language",
    "series": "series",
    "collection": "collections",
    "collections": "collections",
}
_STATS_FIELD = re.compile(r"([A-Za-z][A-Za-z ]*?):\s*(\S+)")

# AO3 names languages in their own script; the English names are accepted too.
_LANGUAGE_CODES = {
    "english": "en",
    "deutsch": "de",
    "german": "de",
    "español": "es",
    "spanish": "es",
    "français": "fr",
    "french": "fr",
    "italiano": "it",
    "italian": "it",
    "nederlands": "nl",
    "dutch": "nl",
    "polski": "pl",
    "polish": "pl",
    "português brasileiro": "pt-BR",
    "português europeu": "pt-PT",
    "portuguese": "pt",
    "русский": "ru",
    "russian": "ru",
    "українська": "uk",
    "ukrainian": "uk",
    "中文-普通话 國語": "zh",
    "中文": "zh",
    "chinese": "zh",
    "中文-广东话 粵語": "yue",
    "日本語": "ja",
    "japanese": "ja",
    "한국어": "ko",
    "korean": "ko",
    "tiếng việt": "vi",
    "vietnamese": "vi",
    "bahasa indonesia": "id",
    "indonesian": "id",
    "suomi": "fi",
    "finnish": "fi",
    "svenska": "sv",
    "swedish": "sv",
    "norsk": "no",
    "norwegian": "no",
    "dansk": "da",
    "danish": "da",
    "čeština": "cs",
    "czech": "cs",
    "magyar": "hu",
    "hungarian": "hu",
    "türkçe": "tr",
    "turkish": "tr",
    "العربية": "ar",
    "arabic": "ar",
    "עברית": "he",
    "hebrew": "he",
    "ไทย": "th",
    "thai": "th",
    "català": "ca",
    "catalan": "ca",
    "ελληνικά": "el",
    "greek": "el",
    "română": "ro",
    "romanian": "ro",
    "filipino": "fil",
    "esperanto": "eo",
    "latina": "la",
    "latin": "la",
}
_LANGUAGE_TAG = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$")


def normalise_language(name: str) -> str:
    """A BCP 47 code for an AO3 language name ("English" → "en"); codes pass through.

    An unknown name is returned as written so nothing is silently mislabelled.
    """
    name = " ".join(name.split())
    if not name:
        return UNKNOWN_LANGUAGE
    code = _LANGUAGE_CODES.get(name.casefold())
    if code is not None:
        return code
    if _LANGUAGE_TAG.match(name):
        primary, *rest = name.replace("_", "-").split("-")
        return "-".join([primary.lower(), *rest])
    return name


def primary_language(code: str) -> str:
    """The primary subtag: "en-GB" → "en"."""
    return code.split("-", 1)[0].lower()


# ---------------------------------------------------------------------------
# HTML → paragraphs


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


# ---------------------------------------------------------------------------
# Work metadata (the preface)


def parse_preface(soup: BeautifulSoup | Tag) -> dict[str, str]:
    """Work metadata from the preface: the tag list, stats, title, author, summary and URL."""
    metadata: dict[str, str] = {}
    preface = soup.find("div", id="preface")
    scope = preface if isinstance(preface, Tag) else soup
    tags = scope.find("dl", class_="tags")
    if isinstance(tags, Tag):
        metadata.update(_parse_tag_list(tags))
    title = scope.find("h1")
    if isinstance(title, Tag) and title.get_text(strip=True):
        metadata["title"] = " ".join(title.get_text(" ").split())
    byline = scope.find(class_="byline")
    if isinstance(byline, Tag):
        metadata["author"] = _byline_author(byline)
    summary = _labelled_block(scope, "Summary")
    if summary:
        metadata["summary"] = summary
    url = _work_url(scope)
    if url:
        metadata["url"] = url
    return metadata


def _parse_tag_list(tags: Tag) -> dict[str, str]:
    metadata: dict[str, str] = {}
    for dt in tags.find_all("dt"):
        dd = dt.find_next_sibling("dd")
        if not isinstance(dd, Tag):
            continue
        label = " ".join(dt.get_text(" ").split()).rstrip(":").strip()
        if label.casefold() == "stats":
            metadata.update(_parse_stats(dd.get_text(" ")))
            continue
        key = _TAG_KEYS.get(label.casefold()) or re.sub(r"\W+", "_", label.casefold()).strip("_")
        links = [" ".join(a.get_text(" ").split()) for a in dd.find_all("a")]
        # AO3 tags cannot contain commas, so a comma-joined list stays unambiguous.
        value = ", ".join(links) if links and key != "series" else " ".join(dd.get_text(" ").split())
        if key:
            metadata[key] = value
    return metadata


def _parse_stats(text: str) -> dict[str, str]:
    """ "Published: 2021-03-03 Completed: 2021-05-01 Words: 32,900 Chapters: 3/3" → fields."""
    stats: dict[str, str] = {}
    for label, value in _STATS_FIELD.findall(" ".join(text.split())):
        key = label.strip().casefold().replace(" ", "_")
        stats[key] = re.sub(r"[,.\s\u00a0\u202f]", "", value) if key == "words" else value
    return stats


def _byline_author(byline: Tag) -> str:
    names = [" ".join(a.get_text(" ").split()) for a in byline.find_all("a")]
    if names:
        return ", ".join(names)
    # Anonymous and orphaned works have a byline without links.
    text = " ".join(byline.get_text(" ").split())
    return re.sub(r"^by\s+", "", text, flags=re.IGNORECASE)


def _labelled_block(scope: Tag | BeautifulSoup, label: str) -> str:
    """The blockquote that follows ``<p>label</p>`` in the preface (work summary / notes)."""
    for p in scope.find_all("p"):
        if " ".join(p.get_text(" ").split()).rstrip(":") == label:
            block = p.find_next_sibling()
            if isinstance(block, Tag) and block.name == "blockquote":
                return paragraph_text(block)
    return ""


def _work_url(scope: Tag | BeautifulSoup) -> str:
    for a in scope.find_all("a", href=True):
        href = str(a["href"])
        if _WORK_ID.search(href) and "/comments" not in href:
            return href
    return ""


# ---------------------------------------------------------------------------
# Chapters


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


# ---------------------------------------------------------------------------
# The reader


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


def count_afterword(soup: BeautifulSoup | Tag, removed: RemovedNotes) -> None:
    """End notes live outside the chapters; they are counted so the record of what was dropped is complete."""
    afterword = soup.find("div", id="afterword")
    if isinstance(afterword, Tag):
        for block in afterword.find_all("blockquote"):
            removed.add("work end notes", block)


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


# ---------------------------------------------------------------------------
# The ChapterBreak filter


@dataclass(frozen=True)
class AO3Filter:
    """Which works ChapterBreak keeps (paper: English, General Audiences, ≥ 10K words, > 10 chapters).

    ``None`` switches the language or rating test off. Words come from AO3's own
    count (metadata "words") when present, because that is what the paper
    filtered on; otherwise from the text.
    """

    language: str | None = "en"
    rating: str | None = "General Audiences"
    min_words: int = 10_000
    min_chapters: int = 11

    def reject_reason(self, book: Book) -> str | None:
        """None when the work is kept, otherwise why it is not."""
        if self.language is not None and primary_language(book.language) != primary_language(self.language):
            return f"language {book.language!r} is not {self.language!r}"
        if self.rating is not None:
            rating = book.metadata.get("rating")
            if rating is None:
                return f"no rating in the work's metadata (needed {self.rating!r})"
            if rating.casefold() != self.rating.casefold():
                return f"rating {rating!r} is not {self.rating!r}"
        words = _metadata_words(book)
        if words < self.min_words:
            return f"{words:,} words, fewer than {self.min_words:,}"
        if len(book.chapters) < self.min_chapters:
            return f"{len(book.chapters)} chapters, fewer than {self.min_chapters}"
        return None

    def keeps(self, book: Book) -> bool:
        return self.reject_reason(book) is None


def _metadata_words(book: Book) -> int:
    words = book.metadata.get("words", "")
    return int(words) if words.isdigit() else book.word_count
