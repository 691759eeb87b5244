"""Applying entity maps to text: this book's names replaced, or another book's names mapped onto this book's.

One regex pass, longest name first, whole words, ALL-CAPS kept in capitals, possessives untouched: a
replacement is never replaced again. A common word kept as a name because titles stand before it
("Mrs. Long") is replaced only right after a title ("Long before" stays). Another book's characters
go, by rank within (kind, gender), to this book's original characters.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping

from longread.benchmarks.narrativexl.names.drawing import _plural
from longread.benchmarks.narrativexl.names.entity_map import EntityEntry, EntityMap
from longread.benchmarks.narrativexl.names.lists import after_title


def _substitute(text: str, mapping: Mapping[str, str], titled_only: frozenset[str] = frozenset()) -> str:
    """Replace whole-word names in one pass, longest first; ALL-CAPS originals get capital replacements;
    the names in ``titled_only`` only right after a title."""
    if not mapping:
        return text
    table: dict[str, str] = {}
    for original, replacement in mapping.items():
        table[original] = replacement
        if original not in titled_only:
            table.setdefault(original.upper(), replacement.upper())
    anywhere = [name for name in table if name not in titled_only]
    alternatives = "|".join(re.escape(name) for name in sorted(anywhere, key=lambda n: (-len(n), n)))
    parts = [rf"(?<![^\W\d_])(?:{alternatives})(?![^\W\d_])"] if anywhere else []
    titled = sorted(name for name in table if name in titled_only)
    if titled:
        parts.append(after_title(titled).pattern)
    pattern = re.compile("|".join(parts))
    return pattern.sub(lambda match: table[match.group()], text)


def apply_entity_map(text: str, entity_map: EntityMap) -> str:
    """``text`` with every original name of the map replaced by its replacement (see the module doc)."""
    return _substitute(text, entity_map.replacements(), entity_map.after_title_only())


def _ranked_groups(entries: Iterable[EntityEntry]) -> dict[tuple[str, str], list[EntityEntry]]:
    groups: dict[tuple[str, str], list[EntityEntry]] = defaultdict(list)
    for entry in sorted(entries, key=lambda e: (-e.mentions, e.original)):
        if entry.plural_of is None:
            groups[(entry.kind, entry.gender)].append(entry)
            groups[(entry.kind, "any")].append(entry)
            groups[("any", "any")].append(entry)
    return groups


def other_book_names(from_map: EntityMap, to_map: EntityMap) -> dict[str, str]:
    """Each character name of the other book (``from_map``) → a character name of this book (``to_map``).

    The authors' ``create_nonrandom_character_insertion_dict`` maps a name to a random name of this
    book of the same kind and gender (else the same kind, else any). Here the choice is by rank: the
    other book's i-th most mentioned name of a (kind, gender) goes to this book's i-th of the same
    (kind, gender), cycling when this book has fewer — so the other book's heroine becomes this
    book's heroine. Plurals follow their stems.
    """
    # a name renamed only after a title ("Long") takes no other book's names: bare, it would stay
    mine = _ranked_groups(entry for entry in to_map.entries if not entry.after_title_only)
    theirs = _ranked_groups(from_map.entries)
    mapping: dict[str, str] = {}
    for (kind, gender), group in theirs.items():
        if kind == "any" or gender == "any":
            continue
        for rank, entry in enumerate(group):
            targets = mine.get((kind, gender)) or mine.get((kind, "any")) or mine.get(("any", "any"))
            if targets:
                mapping[entry.original] = targets[rank % len(targets)].original
    for entry in from_map.entries:
        if entry.plural_of is not None and entry.plural_of in mapping:
            mapping[entry.original] = _plural(mapping[entry.plural_of])
    return mapping


def adapt_other_book(text: str, from_map: EntityMap, to_map: EntityMap) -> str:
    """Another book's text (a summary) with its characters replaced by this book's original characters.

    The result reads as if it were about this book's people, in their *original* names; substitute
    it with ``apply_entity_map(…, to_map)`` like this book's own summaries.
    """
    return _substitute(text, other_book_names(from_map, to_map), from_map.after_title_only())
