"""The MuLD character-archetype baseline's document side: the chunks where the character shows up.

Name forms (:func:`name_forms`): the name as given (whitespace collapsed); the
name without leading titles (``Mr. Darcy`` → ``Darcy``, ``Captain Jack Sparrow``
→ ``Jack Sparrow``); and for a name of two or more words (titles removed) its
first word, the given name (``Harry Potter`` → ``Harry``). Surnames alone are
added only with ``surname=True`` — in a family story (``Elizabeth Bennet``) the
surname names the whole family. Forms shorter than two letters are dropped.

Case (:func:`find_mentions`): a form matches as written, in CAPITALS (screenplay
speaker cues: ``HARRY``, ``HARRY (V.O.)``) and capitalised word by word
(``HARRY`` given → ``Harry`` matches too), never in lower case — ``Will``,
``Rose`` or ``Hope`` must not match the common words. Matches are whole words
(``Harry's`` counts, ``Harrying`` does not); longer forms are tried first, so
``Harry Potter`` is one mention, not two.

Chunks (:func:`mention_chunks`): the script is cut by
:func:`~longread.benchmarks.muld.tasks.chunks.token_chunks`; kept are the chunk of the
first mention, the chunk of the last mention and the chunk holding the most
mentions (ties to the earlier chunk), deduplicated, in document order, each
labelled with its roles and scored with its mention count. When the character is
never mentioned, nothing is kept and the selection's notes say so — a per-sample
result, not an error.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass
from typing import Final

from longread.benchmarks.muld.tasks.chunks import Selection, selection_from_chunks, token_chunks
from longread.text.tokenizers import NamedTokenizer

TITLES: Final[frozenset[str]] = frozenset(
    {"mr", "mrs", "ms", "miss", "mister", "dr", "doctor", "sir", "dame", "lady", "lord", "the"}
    | {"captain", "capt", "colonel", "col", "general", "gen", "major", "lieutenant", "lt", "sergeant", "sgt"}
    | {"professor", "prof", "father", "mother", "aunt", "uncle", "king", "queen", "prince", "princess"}
    | {"detective", "agent", "officer", "reverend", "rev", "saint", "st", "madame", "monsieur", "count"}
)
"""Words dropped from the front of a name to get the name a script also uses alone."""

NO_MENTION_NOTE: Final[str] = "no mention of the character"


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    text: str


def name_forms(character: str, *, surname: bool = False) -> tuple[str, ...]:
    """The forms searched for, longest first (rule in the module docstring)."""
    words = character.split()
    forms = [" ".join(words)]
    core = list(words)
    while len(core) > 1 and core[0].lower().rstrip(".") in TITLES:
        core.pop(0)
    forms.append(" ".join(core))
    if len(core) >= 2:
        forms.append(core[0])
        if surname:
            forms.append(core[-1])
    unique = dict.fromkeys(form for form in forms if sum(ch.isalpha() for ch in form) >= 2)
    return tuple(sorted(unique, key=lambda form: (-len(form), form)))


def _variants(form: str) -> list[str]:
    capitalised = " ".join(word[:1].upper() + word[1:].lower() for word in form.split(" "))
    return list(dict.fromkeys([form, form.upper(), capitalised]))


def mention_pattern(forms: tuple[str, ...]) -> re.Pattern[str]:
    variants = sorted({v for form in forms for v in _variants(form)}, key=lambda v: (-len(v), v))
    alternation = "|".join(r"\s+".join(re.escape(word) for word in v.split(" ")) for v in variants)
    return re.compile(rf"(?<!\w)(?:{alternation})(?!\w)")


def find_mentions(text: str, character: str, *, surname: bool = False) -> list[Mention]:
    forms = name_forms(character, surname=surname)
    if not forms:
        return []
    return [Mention(m.start(), m.end(), m.group(0)) for m in mention_pattern(forms).finditer(text)]


def mention_chunks(
    script: str,
    character: str,
    *,
    tokenizer: NamedTokenizer,
    chunk_tokens: int,
    surname: bool = False,
) -> Selection:
    """The chunks with the first, last and most mentions of ``character`` (module docstring)."""
    if not character.strip():
        raise ValueError("the character name is empty: nothing to look for")
    chunks = token_chunks(script, tokenizer, chunk_tokens)
    forms = name_forms(character, surname=surname)
    mentions = find_mentions(script, character, surname=surname)
    settings: dict[str, str | int | float | bool | None] = {
        "chunk_tokens": chunk_tokens,
        "forms": " | ".join(forms),
        "surname": surname,
        "mentions": len(mentions),
    }
    if not mentions:
        return selection_from_chunks(
            method="mentions",
            tokenizer=tokenizer,
            document=script,
            chunks=chunks,
            chosen=[],
            settings=settings,
            notes=[f"{NO_MENTION_NOTE} {character!r} (forms searched: {', '.join(forms) or 'none'})"],
        )
    starts = [chunk.start for chunk in chunks]
    per_chunk = Counter(bisect.bisect_right(starts, mention.start) - 1 for mention in mentions)
    first = bisect.bisect_right(starts, mentions[0].start) - 1
    last = bisect.bisect_right(starts, mentions[-1].start) - 1
    most = min(per_chunk, key=lambda index: (-per_chunk[index], index))
    roles: dict[int, list[str]] = {}
    for role, index in (("first", first), ("most-mentions", most), ("last", last)):
        roles.setdefault(index, []).append(role)
    chosen = sorted(roles)
    return selection_from_chunks(
        method="mentions",
        tokenizer=tokenizer,
        document=script,
        chunks=chunks,
        chosen=chosen,
        scores=[float(per_chunk[index]) for index in chosen],
        labels=["+".join(roles[index]) for index in chosen],
        settings=settings,
    )
