"""AO3 work metadata from a download's preface (``div#preface``).

Rule: the ``dl.tags`` list (rating, warnings, fandoms, … and the stats line),
the title, byline, work summary and work URL become one flat ``dict[str, str]``;
multi-valued tags are joined with ", " (AO3 tags cannot contain commas).
"""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, Tag

from longread.documents.ao3.html_paragraphs import paragraph_text

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
