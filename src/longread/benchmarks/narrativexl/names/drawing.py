"""Drawing seeded replacement names: the same book and seed always give the same names.

``random.Random`` seeded from sha256(seed, book id) — never the global RNG — draws, in the order of
the found names (most mentioned first), a first name of the same gender from the top
``first_name_pool`` census first names (unknown gender: names on both lists) or a surname from the
top ``surname_pool`` surnames. A replacement is never used twice and never a word of the book; a
family plural gets the plural of its stem's replacement.
"""

from __future__ import annotations

import hashlib
import random

from longread.benchmarks.narrativexl.names.entity_map import EntityEntry, EntityMap, EntitySettings
from longread.benchmarks.narrativexl.names.finding import _WORD, FoundNames
from longread.benchmarks.narrativexl.names.lists import census
from longread.errors import BadInputError


def _rng(seed: int, book_id: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}\x00{book_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _pools(settings: EntitySettings) -> dict[str, list[str]]:
    names = census()
    male = list(names.male)[: settings.first_name_pool]
    female = list(names.female)[: settings.first_name_pool]
    both = [name for name in names.female if name in names.male]
    surnames = [name for name in names.surnames if not name.startswith("Mc")][: settings.surname_pool]
    return {"male": male, "female": female, "unknown": both, "last": surnames}


def _plural(name: str) -> str:
    """A family's plural: the Bennets, the Joneses."""
    return name + ("es" if name.endswith(("s", "x", "z", "ch", "sh")) else "s")


def draw_replacements(
    found: FoundNames, *, book_id: str, seed: int, text: str, settings: EntitySettings = EntitySettings()
) -> EntityMap:
    """A seeded replacement for every found name (never reused, never a word of ``text``)."""
    rng = _rng(seed, book_id)
    pools = _pools(settings)
    taken = {word.lower() for word in _WORD.findall(text)}
    taken.update(name.name.lower() for name in found.names)
    chosen: dict[str, str] = {}
    for name in found.names:
        if name.plural_of is not None:
            continue
        pool = pools["last"] if name.kind == "last" else pools[name.gender]
        free = [candidate for candidate in pool if candidate.lower() not in taken]
        if not free:
            raise BadInputError(None, f"no replacement name left for {name.name!r}", item=book_id)
        replacement = rng.choice(free)
        taken.add(replacement.lower())
        chosen[name.name] = replacement
    entries: list[EntityEntry] = []
    for name in found.names:
        replacement = _plural(chosen[name.plural_of]) if name.plural_of is not None else chosen[name.name]
        entries.append(
            EntityEntry(
                original=name.name,
                replacement=replacement,
                kind=name.kind,
                gender=name.gender,
                mentions=name.mentions,
                plural_of=name.plural_of,
                after_title_only=name.after_title_only,
            )
        )
    return EntityMap(book_id=book_id, seed=seed, entries=tuple(entries), dropped=found.dropped)
