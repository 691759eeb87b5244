"""Metrics: accuracy with Wilson intervals (also per group), bootstrap intervals, word perplexity."""

from longread.metrics.accuracy import (
    AccuracySummary,
    accuracy_by,
    accuracy_of,
    group_sort_key,
    wilson_interval,
)
from longread.metrics.bootstrap import bootstrap_interval
from longread.metrics.perplexity import pooled_word_perplexity, word_perplexity

__all__ = [
    "AccuracySummary",
    "accuracy_by",
    "accuracy_of",
    "bootstrap_interval",
    "group_sort_key",
    "pooled_word_perplexity",
    "wilson_interval",
    "word_perplexity",
]
