"""Metrics: accuracy with Wilson intervals (also per group), bootstrap intervals, word perplexity,
classification F1 and PAN's style-change F1.

The text-generation metrics import sacrebleu, rouge-score and nltk (over a second
to load), so they are not re-exported here: import them from their modules,
``longread.metrics.text_overlap`` (BLEU, ROUGE-L, token F1) and
``longread.metrics.meteor`` (METEOR; WordNet set-up in ``longread.metrics.wordnet``).
"""

from longread.metrics.accuracy import (
    AccuracySummary,
    accuracy_by,
    accuracy_of,
    group_sort_key,
    wilson_interval,
)
from longread.metrics.bootstrap import bootstrap_interval
from longread.metrics.classification import ClassificationScores, ClassScore, classification_scores, macro_f1
from longread.metrics.perplexity import pooled_word_perplexity, word_perplexity
from longread.metrics.style_change import (
    change_counts,
    is_multi_author,
    multi_author_f1,
    pooled_macro_f1,
    style_change_f1,
    style_change_f1_from_counts,
    sum_change_counts,
)

__all__ = [
    "AccuracySummary",
    "ClassScore",
    "ClassificationScores",
    "accuracy_by",
    "accuracy_of",
    "bootstrap_interval",
    "change_counts",
    "classification_scores",
    "group_sort_key",
    "is_multi_author",
    "macro_f1",
    "multi_author_f1",
    "pooled_macro_f1",
    "pooled_word_perplexity",
    "style_change_f1",
    "style_change_f1_from_counts",
    "sum_change_counts",
    "wilson_interval",
    "word_perplexity",
]
