"""METEOR by nltk's ``meteor_score`` with WordNet 3.0 from Debian (see :mod:`longread.metrics.wordnet`).

- **Scale**: 0–100 (nltk's 0–1 value times 100), like the other text metrics.
- **Tokenisation**: a plain regex, :data:`TOKEN_PATTERN` — runs of word characters
  (with inner hyphens or apostrophes kept: "guide-book", "don't") or single
  punctuation marks. nltk's ``word_tokenize`` needs the punkt model, which is not
  installed offline; on ordinary sentences both give the same tokens, and nltk's
  own doctest values are reproduced through this tokenizer. nltk lowercases the
  tokens itself (``preprocess=str.lower``).
- **Settings**: nltk's defaults (alpha 0.9, beta 3, gamma 0.5; exact, Porter-stem
  and WordNet-synonym matching stages).
- **Multi-reference**: nltk's ``meteor_score`` scores the prediction against each
  reference and keeps the best; corpus METEOR = mean over predictions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from longread.metrics.text_overlap import check_references
from longread.metrics.wordnet import WORDNET_SOURCE, wordnet_reader

TOKEN_PATTERN = re.compile(r"\w+(?:[-'’]\w+)*|[^\w\s]")


def meteor_tokens(text: str) -> list[str]:
    """The tokens METEOR compares (see :data:`TOKEN_PATTERN`)."""
    return TOKEN_PATTERN.findall(text)


def meteor_from_tokens(
    prediction_tokens: Sequence[str],
    reference_tokens: Sequence[Sequence[str]],
    wordnet_root: Path | None = None,
    wordnet_source: Path = WORDNET_SOURCE,
) -> float:
    """METEOR (0–100) of pre-tokenised text: the best over the references."""
    if not reference_tokens:
        raise ValueError("a prediction has no reference to be scored against")
    from nltk.translate.meteor_score import meteor_score  # nltk costs ~1.3 s to import: only when scored

    reader = wordnet_reader(wordnet_root, wordnet_source)
    return 100.0 * float(
        meteor_score([list(ref) for ref in reference_tokens], list(prediction_tokens), wordnet=reader)
    )


def meteor(
    prediction: str,
    references: Sequence[str],
    wordnet_root: Path | None = None,
    wordnet_source: Path = WORDNET_SOURCE,
) -> float:
    """METEOR (0–100) of one prediction against its references (best reference wins)."""
    check_references(references)
    return meteor_from_tokens(
        meteor_tokens(prediction), [meteor_tokens(ref) for ref in references], wordnet_root, wordnet_source
    )


def corpus_meteor(
    predictions: Sequence[str],
    references: Sequence[Sequence[str]],
    wordnet_root: Path | None = None,
    wordnet_source: Path = WORDNET_SOURCE,
) -> float:
    """Mean over predictions of :func:`meteor` (0–100)."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} reference lists")
    if not predictions:
        raise ValueError("no predictions to score")
    scores = [
        meteor(p, refs, wordnet_root, wordnet_source) for p, refs in zip(predictions, references, strict=True)
    ]
    return sum(scores) / len(scores)
