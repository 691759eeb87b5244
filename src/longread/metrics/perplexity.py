"""Word-level perplexity, pooled over samples.

Pooling sums log-probabilities and words first and exponentiates once:
``exp(-Σ logprob / Σ words)``. That is the perplexity of all the text taken
together, which is what "perplexity on this data" means; the mean of per-sample
perplexities is not — it is dominated by the worst short samples, and it
changes when texts are split differently. Counting words (not tokens) makes
models with different tokenizers comparable, without the paper's per-tokenizer
conversion factors.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def word_perplexity(total_logprob_nats: float, n_words: int) -> float:
    """``exp(-total_logprob_nats / n_words)``; NaN when there are no words.

    ``total_logprob_nats`` is a sum of natural-log probabilities (≤ 0). A
    positive total is refused: it is almost always a negative log-likelihood
    passed by mistake.
    """
    if n_words < 0:
        raise ValueError(f"n_words must not be negative; got {n_words}")
    if total_logprob_nats > 0:
        raise ValueError(
            f"expected a sum of log-probabilities (<= 0); got {total_logprob_nats} — "
            "was a negative log-likelihood passed?"
        )
    if n_words == 0:
        return math.nan
    return math.exp(-total_logprob_nats / n_words)


def pooled_word_perplexity(logprobs_nats: Iterable[float], word_counts: Iterable[int]) -> float:
    """Word perplexity of several samples taken together (see the module docstring)."""
    total_logprob = 0.0
    total_words = 0
    for logprob, words in zip(logprobs_nats, word_counts, strict=True):
        total_logprob += logprob
        total_words += words
    return word_perplexity(total_logprob, total_words)
