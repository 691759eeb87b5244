"""Fixed vocabularies of name finding: titles (the gender and name kind they signal), census names, places.

Titles are never part of a name; a gendered title before a name votes for its gender, and
``FIRST_NAME_TITLES`` / the others vote for a first name / a surname (``NO_KIND_TITLES`` for
neither). The census lists come from the ``names`` package, frequency-ranked, read once. The known
places (``longread/data/places.txt``: continents, countries, notable cities, British towns and
counties) are names a book may use for a place rather than a person (Geneva, Milan, Florence).
"""

from __future__ import annotations

import functools
import importlib.util
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from longread.errors import BadInputError

MALE_TITLES = frozenset(
    [
        "mr",
        "mister",
        "sir",
        "lord",
        "master",
        "monsieur",
        "m",
        "signor",
        "senor",
        "herr",
        "colonel",
        "col",
        "captain",
        "capt",
        "major",
        "general",
        "gen",
        "lieutenant",
        "lieut",
        "sergeant",
        "admiral",
        "father",
        "brother",
        "uncle",
        "king",
        "prince",
        "duke",
        "count",
        "baron",
        "earl",
        "squire",
    ]
)
FEMALE_TITLES = frozenset(
    [
        "mrs",
        "miss",
        "ms",
        "lady",
        "madam",
        "madame",
        "mme",
        "mlle",
        "mademoiselle",
        "signora",
        "senora",
        "frau",
        "mother",
        "sister",
        "aunt",
        "queen",
        "princess",
        "duchess",
        "countess",
        "baroness",
        "dame",
        "mistress",
    ]
)
NEUTRAL_TITLES = frozenset(["dr", "doctor", "professor", "prof", "rev", "reverend", "st", "saint", "cousin"])
TITLES = MALE_TITLES | FEMALE_TITLES | NEUTRAL_TITLES
SAINT_TITLES = frozenset(("st", "saint"))
# A single name after these is a first name ("Lady Catherine", "Sir William"); after the others a surname.
FIRST_NAME_TITLES = frozenset(
    ["sir", "dame", "prince", "princess", "king", "queen", "brother", "sister", "aunt", "uncle"]
)
# "Miss" stands before first names ("Miss Eliza") and surnames ("Miss Bennet") alike: no vote.
# Nor do "Lady" and "Lord" (Lady Catherine, Lady Lucas).
NO_KIND_TITLES = frozenset(("miss", "mademoiselle", "mlle", "master", "lady", "lord"))


@dataclass(frozen=True)
class Census:
    """The ``names`` package's US census lists, frequency-ranked, in title case."""

    male: dict[str, float]
    female: dict[str, float]
    surnames: dict[str, float]


def _read_census_file(name: str) -> dict[str, float]:
    spec = importlib.util.find_spec("names")
    if spec is None or spec.origin is None:
        raise BadInputError(None, "the census name lists are missing", "pip install names==0.3.0")
    path = Path(spec.origin).parent / name
    ranked: dict[str, float] = {}
    for line in path.read_text(encoding="ascii").splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[0].isalpha():
            ranked.setdefault(fields[0].capitalize(), float(fields[1]))
    return ranked


@functools.cache
def census() -> Census:
    return Census(
        male=_read_census_file("dist.male.first"),
        female=_read_census_file("dist.female.first"),
        surnames=_read_census_file("dist.all.last"),
    )


PLACES_FILE = "places.txt"


@functools.cache
def known_places() -> frozenset[str]:
    """The notable place names shipped in ``longread/data/places.txt`` (one a line, ``#`` comments)."""
    text = (resources.files("longread") / "data" / PLACES_FILE).read_text(encoding="utf-8")
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return frozenset(line for line in lines if line)


def after_title(names: list[str]) -> re.Pattern[str]:
    """Whole-word ``names`` right after a title and its point or one space ("Mrs. Long", "Mrs Long")."""
    behind = "|".join(
        f"(?<=\\b{title.capitalize()}{point}\\s)" for title in sorted(TITLES) for point in ("\\.", "")
    )
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=lambda n: (-len(n), n)))
    return re.compile(f"(?:{behind})(?:{alternatives})(?![^\\W\\d_])")
