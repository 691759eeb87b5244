"""The field-standard text metrics of MuLD's generation tasks, per row and over a corpus.

Each row stores what its metrics need, so ``samples.jsonl`` is enough to
recompute them: BLEU's sufficient statistics (sacrebleu's: n-gram matches and totals up to order 4,
lengths; BLEU-1 reads the first order — summed over rows, so corpus BLEU and its bootstrap are exact and
cheap), and the per-sample ROUGE-L, METEOR and token F1 (each the best over
the references). Scales: 0–100 for all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from longread.evaluation.task import Metric
from longread.metrics.meteor import meteor
from longread.metrics.text_overlap import bleu_from_stats, bleu_stats, rouge_l, sum_bleu_stats, token_f1


def score_text(prediction: str, references: Sequence[str]) -> dict[str, Any]:
    """The row fields of the text metrics for one prediction."""
    refs = [reference for reference in references if reference.strip()]
    return {
        "bleu_stats": bleu_stats(prediction, refs),
        "rouge_l": rouge_l(prediction, refs),
        "meteor": meteor(prediction, refs),
        "token_f1": token_f1(prediction, refs),
    }


def _corpus_bleu(order: int) -> Any:
    def value(rows: Sequence[Any]) -> float | None:
        if not rows:
            return None
        return bleu_from_stats(sum_bleu_stats(row.bleu_stats for row in rows), max_ngram_order=order)

    return value


TEXT_METRICS: tuple[Metric, ...] = (
    Metric(
        "rouge_l",
        "sample",
        sample_value=lambda row: float(row.rouge_l),
        description="ROUGE-L F (rouge-score), best over references, mean over samples, 0–100",
    ),
    Metric(
        "bleu1",
        "corpus",
        corpus_value=_corpus_bleu(1),
        description="corpus BLEU-1 (sacrebleu, multi-reference), 0–100",
    ),
    Metric(
        "bleu4",
        "corpus",
        corpus_value=_corpus_bleu(4),
        description="corpus BLEU-4 (sacrebleu, multi-reference), 0–100",
    ),
    Metric(
        "meteor",
        "sample",
        sample_value=lambda row: float(row.meteor),
        description="METEOR (nltk, WordNet 3.0), best over references, mean over samples, 0–100",
    ),
    Metric(
        "token_f1",
        "sample",
        sample_value=lambda row: float(row.token_f1),
        description="SQuAD token F1, best over references, mean over samples, 0–100",
    ),
)
