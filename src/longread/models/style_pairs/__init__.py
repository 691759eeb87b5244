"""MuLD style change: a same-author classifier on adjacent paragraph pairs (``--model style:…``).

- :mod:`.requests` — ``PairScoreRequest`` / ``PairScoreResult``, capability ``pair_scores``.
- :mod:`.features_stylometric`, :mod:`.features_minilm`, :mod:`.featurizer` — paragraph vectors.
- :mod:`.scoring` — pair features, the untrained cosine score, PAN change F1, threshold search.
- :mod:`.classifier` — the trained logistic regression and its JSON file.
- :mod:`.documents` — style-change documents (paragraphs + PAN truth) for training.
- :mod:`.train` — ``fit_model``, ``adjacent_scores``.
- :mod:`.backend` — ``StylePairBackend``, ``style_backend``.
- Training from MuLD files: ``longread.benchmarks.muld.style_training.train_style_pairs``.
"""

from longread.models.style_pairs.requests import (
    PAIR_SCORES,
    STYLE_PAIR_CAPABILITIES,
    PairScoreRequest,
    PairScoreResult,
)

__all__ = ["PAIR_SCORES", "STYLE_PAIR_CAPABILITIES", "PairScoreRequest", "PairScoreResult"]
