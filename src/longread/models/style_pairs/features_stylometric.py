"""Stylometric paragraph features: what a paragraph's author does regardless of what it is about.

Per paragraph, one float vector of fixed layout (``feature_names``):

1. ``fw:WORD`` — relative frequency (count / words) of each of the fixed
   :data:`FUNCTION_WORDS` (lower-cased whole words; ``’`` read as ``'``).
2. ``punct:NAME`` — each mark of :data:`PUNCTUATION` per 100 characters;
   straight and typographic quotes/apostrophes are separate marks (a writer's or
   an edition's habit).
3. ``shape:*`` — mean and standard deviation of word length (letters), mean
   sentence length in words (sentences end at ``.``, ``!`` or ``?``), type-token
   ratio, share of capitalised words, share of words of 7+ letters, log(1 + words).
4. ``c3:K`` — character 3-grams of the lower-cased text (whitespace runs read as
   one space) hashed with CRC-32 into ``trigram_buckets`` buckets, relative
   frequencies. CRC-32 is fixed across runs and machines (Python's ``hash`` is not).

A paragraph without words gets zeros for the word-based parts.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_FUNCTION_WORDS_TEXT = """
    a about above after again against all also although am among an and another any are as at be
    because been before being below between both but by can could did do does doing down during each
    either enough even ever every few for from further had has have having he her here hers herself him
    himself his how however i if in indeed into is it its itself just least less many may me might
    more most much must my myself neither never no nor not now of off often on once one only or other
    ought our ours ourselves out over own perhaps quite rather same shall she should since so some
    still such than that the their theirs them themselves then there therefore these they this those
    though through thus till to too toward towards under until up upon us very was we were what whatever
    when where whether which while who whom whose why will with within without would yet you your yours
    yourself
"""
FUNCTION_WORDS: tuple[str, ...] = tuple(_FUNCTION_WORDS_TEXT.split())
PUNCTUATION: tuple[tuple[str, str], ...] = (
    ("comma", ","),
    ("period", "."),
    ("semicolon", ";"),
    ("colon", ":"),
    ("exclamation", "!"),
    ("question", "?"),
    ("straight_double_quote", '"'),
    ("straight_single_quote", "'"),
    ("curly_double_quote", "“”"),
    ("curly_single_quote", "‘’"),
    ("parenthesis", "()"),
    ("hyphen", "-"),
    ("dash", "—–"),
    ("ellipsis", "…"),
    ("underscore", "_"),
    ("asterisk", "*"),
)
SHAPE_FEATURES: tuple[str, ...] = (
    "word_length_mean",
    "word_length_std",
    "sentence_length_mean",
    "type_token_ratio",
    "capitalised_share",
    "long_word_share",
    "log_words",
)
DEFAULT_TRIGRAM_BUCKETS = 128

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")
_SENTENCE_END = re.compile(r"[.!?]+")
_SPACES = re.compile(r"\s+")
_FUNCTION_INDEX = {word: index for index, word in enumerate(FUNCTION_WORDS)}


@dataclass(frozen=True)
class StylometricSettings:
    trigram_buckets: int = DEFAULT_TRIGRAM_BUCKETS

    def __post_init__(self) -> None:
        if self.trigram_buckets < 1:
            raise ValueError(f"trigram_buckets must be at least 1, got {self.trigram_buckets}")

    def as_json(self) -> dict[str, int]:
        return {"trigram_buckets": self.trigram_buckets}


def feature_names(settings: StylometricSettings = StylometricSettings()) -> list[str]:
    return (
        [f"fw:{word}" for word in FUNCTION_WORDS]
        + [f"punct:{name}" for name, _ in PUNCTUATION]
        + [f"shape:{name}" for name in SHAPE_FEATURES]
        + [f"c3:{bucket}" for bucket in range(settings.trigram_buckets)]
    )


def _shape(text: str, words: list[str]) -> list[float]:
    if not words:
        return [0.0] * len(SHAPE_FEATURES)
    lengths = np.array([len(word) for word in words], dtype=np.float64)
    sentences = max(1, len([s for s in _SENTENCE_END.split(text) if _WORD.search(s)]))
    return [
        float(lengths.mean()),
        float(lengths.std()),
        len(words) / sentences,
        len({word.lower() for word in words}) / len(words),
        sum(1 for word in words if word[0].isupper()) / len(words),
        float((lengths >= 7).mean()),
        math.log1p(len(words)),
    ]


def _trigrams(text: str, buckets: int) -> np.ndarray:
    profile = np.zeros(buckets, dtype=np.float64)
    flat = _SPACES.sub(" ", text.lower()).strip()
    total = len(flat) - 2
    if total < 1:
        return profile
    for start in range(total):
        profile[zlib.crc32(flat[start : start + 3].encode("utf-8")) % buckets] += 1.0
    return profile / total


def paragraph_features(text: str, settings: StylometricSettings = StylometricSettings()) -> np.ndarray:
    """The feature vector of one paragraph (layout: :func:`feature_names`)."""
    words = _WORD.findall(text.replace("’", "'"))
    function = np.zeros(len(FUNCTION_WORDS), dtype=np.float64)
    for word in words:
        index = _FUNCTION_INDEX.get(word.lower())
        if index is not None:
            function[index] += 1.0
    if words:
        function /= len(words)
    per_100_chars = 100.0 / max(1, len(text))
    punctuation = [sum(text.count(mark) for mark in marks) * per_100_chars for _, marks in PUNCTUATION]
    return np.concatenate(
        [function, np.array(punctuation + _shape(text, words)), _trigrams(text, settings.trigram_buckets)]
    )


def stylometric_matrix(
    paragraphs: Sequence[str], settings: StylometricSettings = StylometricSettings()
) -> np.ndarray:
    """float64 array (paragraphs, features)."""
    width = len(feature_names(settings))
    if not paragraphs:
        return np.zeros((0, width), dtype=np.float64)
    return np.stack([paragraph_features(text, settings) for text in paragraphs])
