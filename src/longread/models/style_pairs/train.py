"""Fit the same-author classifier on style-change documents; score their adjacent pairs.

Pairs (label 1 = same author): every adjacent pair of every training document,
plus, where the truth names each paragraph's author, ``extra_pairs`` non-adjacent
pairs per document drawn with ``numpy.random.default_rng(seed)`` (default: as
many as the document has adjacent pairs), so the classifier also sees far-apart
paragraphs of one author and more different-author pairs than boundaries alone
give. Paragraph statistics (mean, scale) come from the training paragraphs, pair
statistics from the training pairs; logistic regression (scikit-learn, lbfgs,
L2 with ``C``, balanced class weights) is deterministic for the same data.

Training from MuLD files, with the threshold picked and the model written, is
``longread.benchmarks.muld.style_training.train_style_pairs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from longread.models.style_pairs.classifier import StylePairModel
from longread.models.style_pairs.documents import StyleDocument
from longread.models.style_pairs.featurizer import Featurizer
from longread.models.style_pairs.scoring import mean_and_scale, pair_features, standardise


def _extra_pairs(doc: StyleDocument, count: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    n = len(doc.paragraphs)
    if doc.paragraph_authors is None or n < 3 or count < 1:
        return []
    first, second = np.triu_indices(n, k=2)
    chosen = np.sort(rng.choice(len(first), size=min(count, len(first)), replace=False))
    return [(int(first[c]), int(second[c])) for c in chosen]


def _pairs(
    documents: Sequence[StyleDocument], vectors: Sequence[np.ndarray], extra_pairs: int | None, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(first vectors, second vectors, labels 1 = same author, how many extra pairs)."""
    rng = np.random.default_rng(seed)
    left: list[np.ndarray] = []
    right: list[np.ndarray] = []
    labels: list[int] = []
    extra_total = 0
    for doc, matrix in zip(documents, vectors, strict=True):
        n = len(doc.paragraphs)
        if n >= 2:
            left.append(matrix[:-1])
            right.append(matrix[1:])
            labels.extend(1 - c for c in doc.changes)
        extra = _extra_pairs(doc, max(0, n - 1) if extra_pairs is None else extra_pairs, rng)
        if extra and doc.paragraph_authors is not None:
            authors = doc.paragraph_authors
            left.append(matrix[[i for i, _ in extra]])
            right.append(matrix[[j for _, j in extra]])
            labels.extend(int(authors[i] == authors[j]) for i, j in extra)
            extra_total += len(extra)
    return np.concatenate(left), np.concatenate(right), np.asarray(labels, dtype=np.int64), extra_total


def fit_model(
    documents: Sequence[StyleDocument],
    featurizer: Featurizer,
    *,
    seed: int = 0,
    extra_pairs: int | None = None,
    c: float = 1.0,
    training: dict[str, Any] | None = None,
) -> tuple[StylePairModel, int, int, float]:
    """(model with threshold 0.5 for now, adjacent pairs, extra pairs, same-author share)."""
    from sklearn.linear_model import LogisticRegression

    vectors = [featurizer.vectors(doc.paragraphs) for doc in documents]
    feature_mean, feature_scale = mean_and_scale(np.concatenate(vectors))
    z = [standardise(v, feature_mean, feature_scale) for v in vectors]
    left, right, labels, extra = _pairs(documents, z, extra_pairs, seed)
    if len(set(labels.tolist())) < 2:
        raise ValueError("the training pairs are all of one kind (all same author or all different)")
    pairs = pair_features(left, right)
    pair_mean, pair_scale = mean_and_scale(pairs)
    classifier = LogisticRegression(C=c, class_weight="balanced", max_iter=5000, solver="lbfgs")
    classifier.fit(standardise(pairs, pair_mean, pair_scale), labels)
    model = StylePairModel(
        features=featurizer.kind,
        feature_settings=featurizer.settings,
        feature_mean=feature_mean,
        feature_scale=feature_scale,
        pair_mean=pair_mean,
        pair_scale=pair_scale,
        coef=np.asarray(classifier.coef_[0], dtype=np.float64),
        intercept=float(classifier.intercept_[0]),
        threshold=0.5,
        training=dict(training or {}),
    )
    return model, len(labels) - extra, extra, float(labels.mean())


def adjacent_scores(
    model: StylePairModel, documents: Sequence[StyleDocument], featurizer: Featurizer
) -> tuple[np.ndarray, np.ndarray]:
    """(P(same author), true change) of every adjacent pair of the documents, pooled in order."""
    scores = [model.same_author(featurizer.vectors(doc.paragraphs)) for doc in documents]
    changes = [np.asarray(doc.changes, dtype=np.int64) for doc in documents]
    return np.concatenate(scores), np.concatenate(changes)
