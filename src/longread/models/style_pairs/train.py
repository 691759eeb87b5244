"""Train the same-author classifier on a MuLD style-change file and pick its change threshold.

Pairs (label 1 = same author): every adjacent pair of every training document,
plus, where the truth names each paragraph's author, ``extra_pairs`` non-adjacent
pairs per document drawn with ``numpy.random.default_rng(seed)`` (default: as
many as the document has adjacent pairs), so the classifier also sees far-apart
paragraphs of one author and more different-author pairs than boundaries alone
give. Paragraph statistics (mean, scale) come from the training paragraphs, pair
statistics from the training pairs; logistic regression (scikit-learn, lbfgs,
L2 with ``C``, balanced class weights) is deterministic for the same data.

The threshold is the one that maximises PAN's change F1 ("change where
P(same) < threshold", :func:`~longread.models.style_pairs.scoring.best_threshold`)
over the adjacent pairs of the validation file when one is given, else of the
training file. Records that cannot be used are listed in the summary, never
silently skipped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from longread.benchmarks.muld.records import RecordProblem
from longread.errors import BadInputError
from longread.files import read_bytes
from longread.models.errors import ModelSpecError
from longread.models.style_pairs.classifier import FEATURE_KINDS, StylePairModel
from longread.models.style_pairs.documents import StyleDocument, read_style_documents, require_documents
from longread.models.style_pairs.featurizer import Featurizer
from longread.models.style_pairs.scoring import best_threshold, mean_and_scale, pair_features, standardise


@dataclass
class TrainSummary:
    out: Path
    model_sha256: str
    documents: int
    adjacent_pairs: int
    extra_pairs: int
    same_author_share: float
    threshold: float
    threshold_f1: float
    threshold_from: str
    problems: list[RecordProblem] = field(default_factory=list)

    def lines(self) -> list[str]:
        head = [
            f"trained on {self.documents} documents: {self.adjacent_pairs} adjacent + {self.extra_pairs} "
            f"other pairs ({100 * self.same_author_share:.1f}% same author)",
            f"threshold {self.threshold:.4f} "
            f"(PAN change F1 {self.threshold_f1:.4f} on {self.threshold_from})",
            f"wrote {self.out} (sha256 {self.model_sha256[:12]}…)",
        ]
        return head + [f"dropped: {problem}" for problem in self.problems]


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


def _sha256(path: Path) -> str:
    return hashlib.sha256(read_bytes(path)).hexdigest()


def train_style_pairs(
    train_file: str | Path,
    features: str,
    out: str | Path,
    seed: int = 0,
    *,
    validation_file: str | Path | None = None,
    extra_pairs: int | None = None,
    c: float = 1.0,
    trigram_buckets: int | None = None,
    cache_dir: Path | None = None,
) -> TrainSummary:
    """Train on ``train_file``, pick the threshold, write the model JSON to ``out``."""
    import sklearn

    train_path, out_path = Path(train_file), Path(out)
    if features not in FEATURE_KINDS:
        raise ModelSpecError(f"unknown features {features!r}; use {' or '.join(FEATURE_KINDS)}")
    documents, problems = read_style_documents(train_path)
    require_documents(train_path, documents, "train on")
    settings = {"trigram_buckets": trigram_buckets} if trigram_buckets is not None else {}
    featurizer = Featurizer(features, settings, cache_dir=cache_dir)
    training: dict[str, Any] = {
        "train_file": str(train_path),
        "train_sha256": _sha256(train_path),
        "seed": seed,
        "C": c,
        "extra_pairs": "adjacent pairs per document" if extra_pairs is None else extra_pairs,
        "feature_fingerprint": featurizer.fingerprint,
        "scikit_learn": sklearn.__version__,
    }
    try:
        model, adjacent, extra, share = fit_model(
            documents, featurizer, seed=seed, extra_pairs=extra_pairs, c=c, training=training
        )
    except ValueError as exc:
        hint = "train on documents with and without author changes"
        raise BadInputError(train_path, str(exc), hint) from None
    threshold_docs, threshold_from = documents, f"the training file's {len(documents)} documents"
    if validation_file is not None:
        validation_path = Path(validation_file)
        threshold_docs, validation_problems = read_style_documents(validation_path)
        require_documents(validation_path, threshold_docs, "pick the threshold on")
        problems.extend(validation_problems)
        threshold_from = f"{validation_path} ({len(threshold_docs)} documents)"
        training["validation_file"] = str(validation_path)
        training["validation_sha256"] = _sha256(validation_path)
    scores, changes = adjacent_scores(model, threshold_docs, featurizer)
    threshold, f1 = best_threshold(scores.tolist(), changes.tolist())
    training.update(
        documents=len(documents),
        adjacent_pairs=adjacent,
        other_pairs=extra,
        same_author_share=share,
        threshold_rule="max PAN change F1 (macro over change/no change, pooled boundaries)",
        threshold_from=threshold_from,
        threshold_f1=f1,
        records_dropped=len(problems),
    )
    model = replace(model, threshold=threshold, training=training)
    sha = model.save(out_path)
    return TrainSummary(
        out=out_path,
        model_sha256=sha,
        documents=len(documents),
        adjacent_pairs=adjacent,
        extra_pairs=extra,
        same_author_share=share,
        threshold=threshold,
        threshold_f1=f1,
        threshold_from=threshold_from,
        problems=problems,
    )
