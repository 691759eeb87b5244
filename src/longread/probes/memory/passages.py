"""Passages of a book for the memorisation probes: seeded, spread over the book, whole sentences.

The book's text (its chapters as read, headings left out) is cut into sentences. It is divided into as
many equal strata of sentences as passages are asked; in each stratum a seeded start sentence opens a
passage that takes whole sentences until it holds ``min_words`` words. A passage over ``max_words`` is
tried again from the next start sentence of its stratum (at most the stratum's length), so every part of
the book is represented and the same seed gives the same passages. A book too short for the passages
asked gives fewer; the caller counts and reports them.

Name cloze follows Chang et al. 2023 (their ``create_name_cloze_from_booknlp.py``): passages of 40–60
tokens — tokens as BookNLP counts them (words, clitics such as ``'s`` and ``n't``, each punctuation mark),
here by a rule, since longread does not run BookNLP — of whole sentences, that hold exactly one person's
name, one word long, once, and no other proper name; the authors' generic names (``god``, ``mother``,
``papa`` …, :data:`GENERIC_NAMES`) never count. :func:`cloze_passages` checks each stratum's candidates
with spaCy's NER (every entity label counts as a proper name; BookNLP's entity tagger in the paper) and
with a capital-letter rule (a capitalised word inside a sentence that is neither the name, ``I``, nor a
title such as ``Mr.``; at a sentence's start, a word the book never writes in lower case), and keeps the
first that passes. The person names NER finds on the way, ranked by how often the book writes them, are
the candidates of the ranked cloze (:func:`character_names`).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from longread.documents.book import Book

_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*(\s+)(?=[\"'“‘(\[]?[A-Z0-9])")
"""A stop, the closing quotes or brackets that belong to its sentence, then the space between two."""
_LINE_BREAK_AFTER_HYPHEN = re.compile(r"(?<=\S[-‐–—])[ \t]*\n\s*(?=\S)")
_WORD = re.compile(r"\S+")
_CAPITAL_WORD = re.compile(r"(?<![\w'’])([A-Z][a-z]+(?:['’-][A-Za-z]+)*)")
TITLES = frozenset(
    [
        "Mr",
        "Mrs",
        "Miss",
        "Ms",
        "Dr",
        "Sir",
        "Lady",
        "Lord",
        "Madam",
        "Madame",
        "Monsieur",
        "Captain",
        "Colonel",
        "Mister",
        "Master",
        "Saint",
        "St",
    ]
)
MASK = "[MASK]"
GENERIC_NAMES = frozenset(
    [
        "god",
        "dad",
        "mother",
        "father",
        "mama",
        "daddy",
        "ma",
        "papa",
        "mum",
        "jesus",
        "christ",
        "pa",
        "mom",
        "kid",
    ]
)
"""Chang et al.'s ``invalid_names``: a passage whose name is one of these is no cloze passage."""
_BOOKNLP_TOKEN = re.compile(r"(?:Mrs|Mr|Ms|Dr|St)\.|\w+(?=n['’]t\b)|n['’]t\b|['’]\w+|\w+|[^\w\s]")
"""A token as BookNLP (spaCy's tokenizer) counts it, near enough: a title with its stop, a word, a clitic,
a punctuation mark."""
_ABBREVIATION = re.compile(r"(?<![\w])(?:" + "|".join(sorted(TITLES)) + r"|[A-Z])\.$")


@dataclass(frozen=True)
class Passage:
    book: str
    index: int
    """Which stratum of the book (0 … passages − 1) it comes from."""
    start_char: int
    """Offset in the book's text (:func:`book_text`)."""
    text: str

    @property
    def words(self) -> int:
        return len(_WORD.findall(self.text))


@dataclass(frozen=True)
class ClozePassage:
    passage: Passage
    name: str
    masked: str
    """The passage with the name replaced by ``[MASK]``."""


@dataclass(frozen=True)
class ClozeSet:
    """A book's cloze passages; how many strata had none; the person names NER found, by how often the
    book writes each (most first)."""

    passages: list[ClozePassage]
    without: int
    names: list[tuple[str, int]]
    name_parts: frozenset[str] = frozenset()
    """Every word of every person's name NER found (titles and possessives off, lower case): an answer
    naming any of them names a person of the book."""


def booknlp_tokens(text: str) -> int:
    """How many tokens BookNLP would count in ``text`` (see :data:`_BOOKNLP_TOKEN`)."""
    return len(_BOOKNLP_TOKEN.findall(text))


def book_text(book: Book) -> str:
    """The book's chapters as read, each a paragraph group; headings are not part of the text probed."""
    return "\n\n".join(chapter.text.strip() for chapter in book.chapters if chapter.text.strip())


def as_printed(text: str) -> str:
    """The text as the book prints it, its whitespace folded: a line break after a hyphen or a dash
    joins (``Good-\\nbye`` is ``Good-bye``, as the printed word), other whitespace becomes one space.
    Quotes, dashes and hyphens stay as they are."""
    return " ".join(_LINE_BREAK_AFTER_HYPHEN.sub("", text).split())


def sentences(text: str) -> list[tuple[int, str]]:
    """(character offset, sentence) in order, each :func:`as_printed`, with the closing quotes and
    brackets after its stop. A stop after a title or an initial (``Mr. Darcy``, ``J. Smith``) ends no
    sentence."""
    out: list[tuple[int, str]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        if _ABBREVIATION.search(text, max(start, match.start() - 11), match.start() + 1):
            continue
        piece = text[start : match.start(1)]
        if piece.strip():
            out.append((start, as_printed(piece)))
        start = match.end(1)
    if text[start:].strip():
        out.append((start, as_printed(text[start:])))
    return out


Unit = tuple[int, str, int]
"""(character offset in :func:`book_text`, sentence, piece): a passage never joins two pieces."""


def units_of(book: Book, apart: bool = False) -> list[Unit]:
    """The book's sentences; ``apart``: each chapter a piece of its own (the excerpts of built data, which
    need not follow one another), else the whole text one piece."""
    if not apart:
        return [(start, sentence, 0) for start, sentence in sentences(book_text(book))]
    units: list[Unit] = []
    base = 0
    pieces = [chapter.text.strip() for chapter in book.chapters if chapter.text.strip()]
    for index, piece in enumerate(pieces):
        units += [(base + start, sentence, index) for start, sentence in sentences(piece)]
        base += len(piece) + 2  # book_text joins the pieces with a blank line
    return units


def _rng(seed: int, book: str, what: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}\0{book}\0{what}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "little"))


def _strata(n_items: int, n_strata: int) -> list[range]:
    n = max(0, min(n_items, n_strata))
    bounds = [round(i * n_items / n) for i in range(n + 1)] if n else [0]
    return [range(bounds[i], bounds[i + 1]) for i in range(n)]


def _candidates(
    units: Sequence[Unit],
    stratum: range,
    rng: random.Random,
    min_words: int,
    max_words: int,
    count: Callable[[str], int] | None = None,
) -> Iterator[tuple[int, str]]:
    """Passages starting in ``stratum``: a seeded start first, then the next ones (wrapping); a passage's
    sentences are of one piece. ``count``: what the bounds count (default words)."""
    count = count or (lambda sentence: len(_WORD.findall(sentence)))
    if not stratum:
        return
    first = rng.randrange(len(stratum))
    for step in range(len(stratum)):
        at = stratum[(first + step) % len(stratum)]
        words, parts = 0, []
        for _, sentence, piece in units[at:]:
            if piece != units[at][2]:
                break
            parts.append(sentence)
            words += count(sentence)
            if words >= min_words:
                break
        if min_words <= words <= max_words:
            yield units[at][0], " ".join(parts)


def passages(
    book: Book, count: int, seed: int, *, min_words: int = 40, max_words: int = 100, apart: bool = False
) -> list[Passage]:
    """Up to ``count`` passages of ``min_words``–``max_words`` words, one per stratum of the book
    (``apart``: none across two chapters, see :func:`units_of`)."""
    units = units_of(book, apart)
    rng = _rng(seed, book.id, "passages")
    out = []
    for index, stratum in enumerate(_strata(len(units), count)):
        found = next(_candidates(units, stratum, rng, min_words, max_words), None)
        if found is not None:
            out.append(Passage(book.id, index, found[0], found[1]))
    return out


Entities = Callable[[str], list[tuple[str, str]]]
"""text → its named entities as (text, label)."""


def spacy_entities() -> Entities:
    from longread.text.ner import load_ner

    nlp = load_ner()
    return lambda text: [(ent.text, ent.label_) for ent in nlp(text).ents]


def cloze_passages(
    book: Book,
    count: int,
    seed: int,
    entities: Entities,
    *,
    min_tokens: int = 40,
    max_tokens: int = 60,
    apart: bool = False,
) -> ClozeSet:
    """Up to ``count`` cloze passages of ``min_tokens``–``max_tokens`` BookNLP tokens, one per stratum
    (module docstring)."""
    text = book_text(book)
    units = units_of(book, apart)
    ordinary = set(re.findall(r"(?<![\w'’])[a-z]+", text))
    rng = _rng(seed, book.id, "cloze")
    found: list[ClozePassage] = []
    people: set[str] = set()
    parts: set[str] = set()
    strata = _strata(len(units), count)
    for index, stratum in enumerate(strata):
        for start, passage in _candidates(units, stratum, rng, min_tokens, max_tokens, booknlp_tokens):
            ents = entities(passage)
            people.update(person_names(ents))
            parts.update(name_words(ents))
            name = single_name(passage, ents, ordinary)
            if name is not None:
                masked = re.sub(rf"(?<![\w'’]){re.escape(name)}(?![\w])", MASK, passage, count=1)
                found.append(ClozePassage(Passage(book.id, index, start, passage), name, masked))
                break
    people.update(item.name for item in found)
    parts.update(name.lower() for name in people)
    return ClozeSet(found, len(strata) - len(found), character_names(text, people), frozenset(parts))


def _person_parts(ents: Sequence[tuple[str, str]]) -> list[list[str]]:
    """Each PERSON entity's words, a possessive ``'s`` and a leading title taken off."""
    out = []
    for text, label in ents:
        if label != "PERSON":
            continue
        parts = re.sub(r"['’]s$", "", text.strip()).split()
        if parts and parts[0].rstrip(".") in TITLES:
            parts = parts[1:]
        out.append(parts)
    return out


def name_words(ents: Sequence[tuple[str, str]]) -> set[str]:
    """The words of every person's name among ``ents``, lower case (titles and a possessive off)."""
    out = {
        p.lower().strip(".,;:!?")
        for parts in _person_parts(ents)
        for p in parts
        if re.fullmatch(r"[A-Z][\w'’-]*\.?", p)
    }
    return out - GENERIC_NAMES


def person_names(ents: Sequence[tuple[str, str]]) -> set[str]:
    """The one-word person names among ``ents`` (titles and a possessive ``'s`` taken off)."""
    out = set()
    for parts in _person_parts(ents):
        one_word = len(parts) == 1 and re.fullmatch(r"[A-Z][a-z]+(?:['’-][A-Za-z]+)*", parts[0])
        if one_word and parts[0].lower() not in GENERIC_NAMES:
            out.add(parts[0])
    return out


def character_names(text: str, people: set[str]) -> list[tuple[str, int]]:
    """``people`` with how often ``text`` writes each as a word, most first (ties by name)."""
    counts = {name: len(re.findall(rf"(?<![\w'’]){re.escape(name)}(?![\w])", text)) for name in people}
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def single_name(text: str, ents: Sequence[tuple[str, str]], ordinary: set[str] | None = None) -> str | None:
    """The one-word person's name a passage holds once and alone, or None (see the module docstring).

    ``ordinary``: words the book uses in lower case; a capitalised word opening a sentence that is not
    one of them is taken for another proper name."""
    if len(ents) != 1 or ents[0][1] != "PERSON":
        return None
    name = re.sub(r"['’]s$", "", ents[0][0].strip())
    parts = name.split()
    if parts and parts[0].rstrip(".") in TITLES:
        parts = parts[1:]
    if len(parts) != 1 or not re.fullmatch(r"[A-Z][a-z]+(?:['’-][A-Za-z]+)*", parts[0]):
        return None
    name = parts[0]
    if name.lower() in GENERIC_NAMES:
        return None  # the authors' generic names (Mother, Papa …) are no cloze
    if len(re.findall(rf"(?<![\w'’]){re.escape(name)}(?![\w])", text)) != 1:
        return None  # twice in the passage: the mask could be read off the rest of it
    for match in _CAPITAL_WORD.finditer(text):
        word = match.group(1)
        if word == name or word.rstrip(".") in TITLES or word == "I":
            continue
        if not _sentence_start(text, match.start()):
            return None  # another proper name, by its capital letter inside a sentence
        if ordinary is not None and word.lower() not in ordinary:
            return None  # opening a sentence, but a word the book never writes in lower case
    return name


def _sentence_start(text: str, at: int) -> bool:
    before = text[:at].rstrip(" \"'“‘(—-")
    return not before or before[-1] in ".!?"
