"""Seeded renaming of a book's characters: each found person renamed consistently, by a name of their gender.

:func:`build_entity_map` finds the names and their kind and gender (spaCy and census lists),
:func:`draw_replacements` draws seeded replacements, :func:`apply_entity_map` renames a text; the rules
are in :mod:`.entities`, and each step in its own module.
"""

from __future__ import annotations

from longread.benchmarks.narrativexl.names.drawing import draw_replacements
from longread.benchmarks.narrativexl.names.entities import build_entity_map
from longread.benchmarks.narrativexl.names.entity_map import (
    ENTITY_MAP_VERSION,
    DroppedName,
    EntityEntry,
    EntityMap,
    EntitySettings,
    Gender,
    NameKind,
)
from longread.benchmarks.narrativexl.names.finding import FoundName, FoundNames, find_names
from longread.benchmarks.narrativexl.names.lists import (
    FEMALE_TITLES,
    FIRST_NAME_TITLES,
    MALE_TITLES,
    NEUTRAL_TITLES,
    NO_KIND_TITLES,
    SAINT_TITLES,
    TITLES,
    Census,
    census,
)
from longread.benchmarks.narrativexl.names.substitution import (
    adapt_other_book,
    apply_entity_map,
    other_book_names,
)
from longread.text.ner import SPACY_MODEL, load_ner

__all__ = [
    "ENTITY_MAP_VERSION",
    "FEMALE_TITLES",
    "FIRST_NAME_TITLES",
    "MALE_TITLES",
    "NEUTRAL_TITLES",
    "NO_KIND_TITLES",
    "SAINT_TITLES",
    "SPACY_MODEL",
    "TITLES",
    "Census",
    "DroppedName",
    "EntityEntry",
    "EntityMap",
    "EntitySettings",
    "FoundName",
    "FoundNames",
    "Gender",
    "NameKind",
    "adapt_other_book",
    "apply_entity_map",
    "build_entity_map",
    "census",
    "draw_replacements",
    "find_names",
    "load_ner",
    "other_book_names",
]
