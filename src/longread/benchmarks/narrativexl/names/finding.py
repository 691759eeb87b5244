"""Deciding which name parts are characters, and each one's kind (first / last) and gender.

From the spaCy counts (:mod:`.person_mentions`) and the census lists: most first / last votes win
(a census first name adds a first vote; a tie is a first name); gender needs a score of at least 1
and 1.5 times the other side's (census first names add weight 4, split by the two lists'
frequencies), and a surname both sides use is a family's (unknown). Noise is dropped with its reason;
a plural of a kept name ("Bingleys") is kept as the plural of its stem. Most mentioned first.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from longread.benchmarks.narrativexl.names.entity_map import DroppedName, EntitySettings, Gender, NameKind
from longread.benchmarks.narrativexl.names.lists import Census, after_title, census, known_places
from longread.benchmarks.narrativexl.names.mentions import _collect, _PartStats
from longread.text.ner import load_ner

if TYPE_CHECKING:
    from spacy.language import Language

_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_PLACE_PREPOSITION = re.compile(r"\b(?:in|near|into|at|from|through)\s+([A-Z][^\W\d_]+)\b(?!['’])")
_PLACE_CONTEXT = re.compile(r"\b(?i:in|near|into|at|to|from|through|towards?)\s+([A-Z][^\W\d_]+)\b(?!['’])")
_POSSESSIVE_TAIL = re.compile(r"['’]s$")


@dataclass(frozen=True)
class FoundName:
    """A name part kept as a character's name, with what decided its kind and gender."""

    name: str
    kind: NameKind
    gender: Gender
    mentions: int
    person_votes: int
    plural_of: str | None = None
    after_title_only: bool = False
    """A common word that is a name after a title ("Mrs. Long"): renamed only there."""


@dataclass(frozen=True)
class FoundNames:
    names: tuple[FoundName, ...]
    dropped: tuple[DroppedName, ...] = field(default=())


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


def _common_word(name: str, words: Counter[str], settings: EntitySettings) -> str | None:
    lower, uses = words[name.lower()], words[name]
    if lower >= settings.common_word_ratio * max(uses, 1):
        return f"a common word ({lower} lower-case uses, {uses} capitalised)"
    return None


def _known_place(name: str, stats: _PartStats, place_context: Counter[str]) -> str | None:
    """A known place used as one: place labels and place-context uses at least its PERSON mentions,
    never after a title."""
    if name not in known_places() or stats.titled:
        return None
    signs = stats.other + place_context[name]
    if signs and signs >= stats.person:
        return (
            f"a known place ({stats.other} place labels, {place_context[name]} uses after "
            f"in/at/to/from/near/into/through/towards, {stats.person} PERSON)"
        )
    return None


def _drop_reason(
    name: str,
    stats: _PartStats,
    words: Counter[str],
    contexts: tuple[Counter[str], Counter[str]],
    settings: EntitySettings,
) -> str | None:
    names = census()
    after_preposition, place_context = contexts
    uses = words[name]
    if len(name) < 2 or name.endswith("."):
        return "an initial"
    if name.isupper():
        return "all capitals (a heading)"
    place = _known_place(name, stats, place_context)
    if place is not None:
        return place
    is_first_name = name in names.male or name in names.female
    # spaCy often labels a heroine's name GPE or ORG (Lydia, Georgiana): a census first name counts them.
    votes = stats.person + stats.other if is_first_name else stats.person
    if votes < settings.min_person_votes:
        return f"{stats.person} PERSON mention(s), fewer than {settings.min_person_votes}"
    common = _common_word(name, words, settings)
    if common is not None and stats.titled < settings.min_person_votes:
        return common  # a common word after a title at least min_person_votes times is a name there
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
    contexts = (
        Counter(_PLACE_PREPOSITION.findall(text)),
        Counter(match.group(1) for match in _PLACE_CONTEXT.finditer(text)),
    )
    kept: dict[str, _PartStats] = {}
    dropped: list[DroppedName] = []
    for name in sorted(stats):
        reason = _drop_reason(name, stats[name], words, contexts, settings)
        if reason is None:
            kept[name] = stats[name]
        elif stats[name].person or stats[name].titled or name in names.male or name in names.female:
            dropped.append(DroppedName(name=name, reason=reason))
    found: list[FoundName] = []
    for name, part in kept.items():
        stem = next(
            (name[: -len(s)] for s in ("es", "s") if name.endswith(s) and name[: -len(s)] in kept), None
        )
        kind = "last" if stem else _kind(name, part, names)
        gender = "unknown" if stem else _gender(name, kind, part, names)
        if _common_word(name, words, settings) is not None:
            titled = len(after_title([name]).findall(text))
            found.append(FoundName(name, kind, gender, titled, part.person, after_title_only=True))
            continue
        found.append(
            FoundName(name, kind, gender, words[name] + words[name.upper()], part.person, plural_of=stem)
        )
    found.sort(key=lambda item: (-item.mentions, item.name))
    return FoundNames(names=tuple(found), dropped=tuple(dropped))
