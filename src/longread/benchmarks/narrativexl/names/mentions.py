"""Reading a book with spaCy's NER: per name part, its PERSON and place mentions, title and pronoun votes.

The text is read in paragraph groups of about ``batch_chars`` characters (newlines inside a paragraph
read as spaces). A PERSON entity loses its possessive and titles and is split into capitalised name
parts; each part counts its mentions, its first / last votes (position in a multi-part name, or the
title before it), and its gender votes (gendered titles, weight 2; the first he/she pronoun in the
120 characters after it, weight 0.5). Place labels (GPE/LOC/FAC/ORG) are counted apart.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from longread.benchmarks.narrativexl.names.entity_map import EntitySettings
from longread.benchmarks.narrativexl.names.lists import (
    FEMALE_TITLES,
    FIRST_NAME_TITLES,
    MALE_TITLES,
    NO_KIND_TITLES,
    SAINT_TITLES,
    TITLES,
)

if TYPE_CHECKING:
    from spacy.language import Language


_TITLE_BEFORE = re.compile(r"\b([A-Z][a-z]{0,12})\.?\s+$")
_PRONOUN = re.compile(r"\b(he|him|his|himself|she|her|hers|herself)\b", re.IGNORECASE)
_MALE_PRONOUNS = frozenset(("he", "him", "his", "himself"))
_NAME_PART = re.compile(r"^[A-Z][^\W\d_]*(?:['’-][^\W\d_]+)*$")
_POSSESSIVE = re.compile(r"['’]s?$")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_PLACE_LABELS = frozenset(("GPE", "LOC", "FAC", "ORG"))


@dataclass
class _PartStats:
    person: int = 0
    other: int = 0
    first_votes: int = 0
    last_votes: int = 0
    male: float = 0.0
    female: float = 0.0
    titled: int = 0


def _batches(text: str, limit: int) -> Iterator[str]:
    """Paragraph groups of about ``limit`` characters, newlines inside a paragraph read as spaces."""
    current: list[str] = []
    size = 0
    for paragraph in _PARAGRAPH_BREAK.split(text):
        paragraph = " ".join(paragraph.split())
        if not paragraph:
            continue
        if current and size + len(paragraph) > limit:
            yield "\n\n".join(current)
            current, size = [], 0
        current.append(paragraph)
        size += len(paragraph) + 2
    if current:
        yield "\n\n".join(current)


def _split_entity(entity: str) -> tuple[list[str], list[str]]:
    """(titles, name parts) of an entity's text: possessive and titles off, only capitalised parts."""
    words = [
        _POSSESSIVE.sub("", word) if word.endswith(("'s", "’s", "'", "’")) else word
        for word in entity.split()
    ]
    titles: list[str] = []
    parts: list[str] = []
    for word in words:
        bare = word.rstrip(".,;:")
        if not parts and bare.lower() in TITLES:
            titles.append(bare.lower())
        elif _NAME_PART.match(bare):
            parts.append(bare)
    return titles, parts


def _pronoun_after(text: str, end: int) -> str | None:
    window = text[end : end + 120]
    match = _PRONOUN.search(window)
    if match is None:
        return None
    return "male" if match.group(1).lower() in _MALE_PRONOUNS else "female"


def _collect(text: str, nlp: Language, settings: EntitySettings) -> dict[str, _PartStats]:
    stats: dict[str, _PartStats] = defaultdict(_PartStats)
    for doc in nlp.pipe(_batches(text, settings.batch_chars), batch_size=32):
        for entity in doc.ents:
            titles, parts = _split_entity(entity.text)
            if not parts or any(title in SAINT_TITLES for title in titles):
                continue  # "St. James's" is a place or a saint, no character
            if entity.label_ in _PLACE_LABELS:
                for part in parts:
                    stats[part].other += 1
                continue
            if entity.label_ != "PERSON":
                continue
            if not titles:
                before = _TITLE_BEFORE.search(doc.text[max(0, entity.start_char - 16) : entity.start_char])
                if before and before.group(1).lower() in TITLES:
                    titles = [before.group(1).lower()]
            male = sum(title in MALE_TITLES for title in titles)
            female = sum(title in FEMALE_TITLES for title in titles)
            pronoun = _pronoun_after(doc.text, entity.end_char)
            for position, part in enumerate(parts):
                part_stats = stats[part]
                part_stats.person += 1
                part_stats.titled += bool(titles)
                part_stats.male += 2 * male + 0.5 * (pronoun == "male")
                part_stats.female += 2 * female + 0.5 * (pronoun == "female")
                if len(parts) > 1:
                    if position == len(parts) - 1:
                        part_stats.last_votes += 1
                    else:
                        part_stats.first_votes += 1
                elif titles and titles[-1] not in NO_KIND_TITLES:
                    if titles[-1] in FIRST_NAME_TITLES:
                        part_stats.first_votes += 1
                    else:
                        part_stats.last_votes += 1
    return stats
