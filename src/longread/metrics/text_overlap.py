"""Text-overlap metrics of generated text against several references: BLEU, ROUGE-L, token F1.

Every score here is on a **0–100 scale** (sacrebleu's own scale; ROUGE-L and
token F1 are the libraries' 0–1 values times 100), so the three read alike in a
report. The golden tests compare against each library's published values on
its own scale.

Multi-reference rules, one per metric:

- **BLEU** (sacrebleu 2.x, its defaults: ``13a`` tokenisation, case-sensitive,
  ``exp`` smoothing, no effective order at corpus level): sacrebleu's native
  multi-reference BLEU — an n-gram is matched up to the largest count it has in
  any one reference, and the brevity penalty uses the reference length closest
  to the prediction's (the shorter on a tie). Corpus BLEU sums these statistics
  over all predictions before taking precisions, as BLEU is defined.
- **ROUGE-L** (rouge-score, ``use_stemmer=True`` as in Google's summarisation
  work and the NarrativeQA evaluation script, which stems too): per prediction
  the best F-measure over its references (``RougeScorer.score_multi``); corpus =
  mean over predictions. rouge-score's tokenizer keeps only ``[a-z0-9]`` after
  lowercasing, so letters outside ASCII (German umlauts, ß) split words: fine
  for English, coarse for the EN→DE translation task.
- **Token F1** (SQuAD v1.1's rule): lowercase, drop ASCII punctuation, drop the
  articles a/an/the, split on whitespace; F1 of the bags of tokens; per
  prediction the best over its references; corpus = mean. An empty prediction
  or reference scores 0 (v1.1 returns 0 whenever nothing is shared).

For bootstrap intervals a task stores :func:`bleu_stats` per row once; a corpus
BLEU over any resample is then :func:`bleu_from_stats` of the summed statistics,
equal to sacrebleu's ``corpus_score`` on those rows.
"""

from __future__ import annotations

import functools
import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from sacrebleu.metrics.bleu import BLEU

if TYPE_CHECKING:  # rouge-score imports nltk (~1.3 s: scipy, sklearn, pandas): only when ROUGE is scored
    from rouge_score.rouge_scorer import RougeScorer

BLEU_MAX_ORDER = 4
# [prediction length, closest reference length, matches of order 1..4, totals of order 1..4]
BLEU_STATS_LENGTH = 2 + 2 * BLEU_MAX_ORDER
ROUGE_USE_STEMMER = True
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def check_references(references: Sequence[str]) -> None:
    """Every prediction needs at least one reference, each a string."""
    if isinstance(references, str):
        raise TypeError("references must be a sequence of strings, not one string; wrap it in a list")
    if len(references) == 0:
        raise ValueError("a prediction has no reference to be scored against")
    for reference in references:
        if not isinstance(reference, str):
            raise TypeError(f"a reference is {type(reference).__name__}, not a string: {reference!r}")


def _check_pairs(predictions: Sequence[str], references: Sequence[Sequence[str]]) -> None:
    if len(predictions) != len(references):
        raise ValueError(
            f"{len(predictions)} predictions but {len(references)} reference lists; they must pair up"
        )
    if not predictions:
        raise ValueError("no predictions to score")
    for refs in references:
        check_references(refs)


# --- BLEU -------------------------------------------------------------------------------------------


@functools.cache
def _bleu(max_ngram_order: int, effective_order: bool = False) -> BLEU:
    if not 1 <= max_ngram_order <= BLEU_MAX_ORDER:
        raise ValueError(f"max_ngram_order must be 1..{BLEU_MAX_ORDER}; got {max_ngram_order}")
    return BLEU(max_ngram_order=max_ngram_order, effective_order=effective_order)


def pad_reference_streams(references: Sequence[Sequence[str]]) -> list[list[str | None]]:
    """sacrebleu's reference layout: stream j holds the j-th reference of every prediction.

    A prediction with fewer references than the most any has gets ``None`` in the
    streams it lacks; sacrebleu drops ``None`` references for that prediction, so
    ragged reference lists are scored against exactly the references they have.
    """
    width = max(len(refs) for refs in references)
    return [[refs[j] if j < len(refs) else None for refs in references] for j in range(width)]


def corpus_bleu(
    predictions: Sequence[str], references: Sequence[Sequence[str]], max_ngram_order: int = 4
) -> float:
    """Corpus BLEU (0–100) by sacrebleu's ``corpus_score`` with multi-reference streams.

    ``max_ngram_order=4`` is BLEU-4 (sacrebleu's ``BLEU()``), ``1`` is BLEU-1.
    Ragged reference lists are padded with ``None`` (:func:`pad_reference_streams`).
    """
    _check_pairs(predictions, references)
    streams = pad_reference_streams(references)
    # sacrebleu types its references as Sequence[Sequence[str]] but documents and accepts None padding.
    return float(_bleu(max_ngram_order).corpus_score(list(predictions), streams).score)  # type: ignore[arg-type]


def bleu_stats(prediction: str, references: Sequence[str]) -> list[int]:
    """sacrebleu's sufficient statistics of one prediction (order 4, usable for BLEU-1 too).

    ``[prediction length, closest reference length, matches_1..4, totals_1..4]``:
    the same numbers ``corpus_score`` collects per sentence (its
    ``_extract_corpus_statistics``). The closest reference length depends only on
    the prediction's length, so BLEU-1 reads the first-order entries of the same list.
    """
    check_references(references)
    stats = _bleu(BLEU_MAX_ORDER)._extract_corpus_statistics([prediction], [[ref] for ref in references])
    return [int(value) for value in stats[0]]


def sum_bleu_stats(rows: Iterable[Sequence[int]]) -> list[int]:
    """Element-wise sum of per-prediction :func:`bleu_stats` lists."""
    total = [0] * BLEU_STATS_LENGTH
    for stats in rows:
        if len(stats) != BLEU_STATS_LENGTH:
            raise ValueError(f"BLEU statistics have {BLEU_STATS_LENGTH} numbers; got {len(stats)}")
        for i, value in enumerate(stats):
            total[i] += value
    return total


def bleu_from_stats(summed: Sequence[int], max_ngram_order: int = 4) -> float:
    """Corpus BLEU (0–100) from summed :func:`bleu_stats`, by sacrebleu's ``_compute_score_from_stats``."""
    if len(summed) != BLEU_STATS_LENGTH:
        raise ValueError(f"BLEU statistics have {BLEU_STATS_LENGTH} numbers; got {len(summed)}")
    n = max_ngram_order
    order_stats = [
        summed[0],
        summed[1],
        *summed[2 : 2 + n],
        *summed[2 + BLEU_MAX_ORDER : 2 + BLEU_MAX_ORDER + n],
    ]
    return float(_bleu(n)._compute_score_from_stats(order_stats).score)


def sentence_bleu(prediction: str, references: Sequence[str], max_ngram_order: int = 4) -> float:
    """Sentence BLEU (0–100) as sacrebleu's ``sentence_bleu``: ``exp`` smoothing and effective order.

    Effective order ignores n-gram orders the prediction is too short to have, which
    sacrebleu recommends for single sentences. A per-row diagnostic, not the corpus metric.
    """
    check_references(references)
    return float(
        _bleu(max_ngram_order, effective_order=True).sentence_score(prediction, list(references)).score
    )


# --- ROUGE-L ----------------------------------------------------------------------------------------


@functools.cache
def _rouge_scorer(use_stemmer: bool) -> RougeScorer:
    from rouge_score.rouge_scorer import RougeScorer

    return RougeScorer(["rougeL"], use_stemmer=use_stemmer)


def rouge_l(prediction: str, references: Sequence[str], use_stemmer: bool = ROUGE_USE_STEMMER) -> float:
    """ROUGE-L F-measure (0–100) of one prediction: the best over its references (``score_multi``)."""
    check_references(references)
    best = _rouge_scorer(use_stemmer).score_multi(list(references), prediction)["rougeL"]
    return 100.0 * float(best.fmeasure)


def corpus_rouge_l(
    predictions: Sequence[str], references: Sequence[Sequence[str]], use_stemmer: bool = ROUGE_USE_STEMMER
) -> float:
    """Mean over predictions of :func:`rouge_l` (0–100)."""
    _check_pairs(predictions, references)
    scores = [rouge_l(p, refs, use_stemmer) for p, refs in zip(predictions, references, strict=True)]
    return sum(scores) / len(scores)


# --- token F1 ---------------------------------------------------------------------------------------


def normalize_answer(text: str) -> str:
    """SQuAD v1.1: lowercase, remove punctuation, remove articles, collapse whitespace (in that order)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _token_f1_one(prediction_tokens: list[str], reference_tokens: list[str]) -> float:
    common = Counter(prediction_tokens) & Counter(reference_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(prediction_tokens)
    recall = same / len(reference_tokens)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, references: Sequence[str]) -> float:
    """SQuAD token F1 (0–100) of one prediction: the best over its references."""
    check_references(references)
    prediction_tokens = normalize_answer(prediction).split()
    return 100.0 * max(_token_f1_one(prediction_tokens, normalize_answer(ref).split()) for ref in references)


def corpus_token_f1(predictions: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """Mean over predictions of :func:`token_f1` (0–100)."""
    _check_pairs(predictions, references)
    scores = [token_f1(p, refs) for p, refs in zip(predictions, references, strict=True)]
    return sum(scores) / len(scores)
