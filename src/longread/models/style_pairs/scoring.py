"""Pair representation, the untrained cosine score, PAN's change F1 and the threshold that maximises it.

Pair of paragraph vectors ``a``, ``b`` (already standardised) →
``[|a − b| …, cos(a, b)]``: how far apart they are in every feature, and their
overall agreement.

Untrained score (no model file): the document's paragraph vectors are
standardised over the document itself (each feature's mean and standard
deviation across its paragraphs; a constant feature keeps scale 1), and an
adjacent pair's same-author probability is ``(1 + cos(a, b)) / 2``. Centring on
the document needs a reference: with fewer than :data:`MIN_PARAGRAPHS_TO_CENTRE`
paragraphs two centred vectors are opposite by construction, so such a
document's pair gets 0.5 (undecided) instead.

PAN's change F1 (the PAN 2021–2023 evaluators' ``task2``/``task3`` score): every
boundary of every document pooled, labels 1 = change and 0 = no change, F1 of
each label, macro average (a label with no true and no predicted boundary scores 0,
as scikit-learn's ``zero_division=0``). A change is predicted where the
same-author probability is below the threshold.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MIN_PARAGRAPHS_TO_CENTRE = 3


def standardise(vectors: np.ndarray, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    result: np.ndarray = (vectors - mean) / scale
    return result


def mean_and_scale(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-column mean and standard deviation (population), a zero deviation read as 1 (as scikit-learn)."""
    mean = vectors.mean(axis=0)
    scale = vectors.std(axis=0)
    scale[scale == 0.0] = 1.0
    return mean, scale


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity; a zero row has similarity 0 with anything."""
    dots = np.einsum("ij,ij->i", a, b)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    result: np.ndarray = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return result


def pair_features(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(pairs, features + 1)``: |a − b| per feature, then cos(a, b)."""
    return np.concatenate([np.abs(a - b), cosine_rows(a, b)[:, None]], axis=1)


def untrained_same_author(vectors: np.ndarray) -> np.ndarray:
    """Same-author probabilities of adjacent paragraphs from document-standardised cosine (see module doc)."""
    n = len(vectors)
    if n < 2:
        return np.zeros(0, dtype=np.float64)
    if n < MIN_PARAGRAPHS_TO_CENTRE:
        return np.full(n - 1, 0.5)
    mean, scale = mean_and_scale(vectors)
    z = standardise(vectors, mean, scale)
    result: np.ndarray = (1.0 + cosine_rows(z[:-1], z[1:])) / 2.0
    clipped: np.ndarray = np.clip(result, 0.0, 1.0)
    return clipped


def _f1(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    denominator = 2 * tp + fp + fn
    result: np.ndarray = np.divide(
        2 * tp, denominator, out=np.zeros_like(tp, dtype=np.float64), where=denominator > 0
    )
    return result


def pan_change_f1(truth: Sequence[int], predicted: Sequence[int]) -> float:
    """Macro F1 over labels {0, 1} of pooled boundaries (1 = change)."""
    t = np.asarray(truth, dtype=np.int64)
    p = np.asarray(predicted, dtype=np.int64)
    if t.shape != p.shape:
        raise ValueError(f"{len(t)} true boundaries but {len(p)} predicted")
    tp1 = np.array([np.sum((t == 1) & (p == 1))], dtype=np.float64)
    tp0 = np.array([np.sum((t == 0) & (p == 0))], dtype=np.float64)
    fp1 = np.array([np.sum((t == 0) & (p == 1))], dtype=np.float64)
    fn1 = np.array([np.sum((t == 1) & (p == 0))], dtype=np.float64)
    return float((_f1(tp1, fp1, fn1)[0] + _f1(tp0, fn1, fp1)[0]) / 2)


def best_threshold(same_author: Sequence[float], changes: Sequence[int]) -> tuple[float, float]:
    """(threshold, PAN change F1 there) maximising the F1 of "change where same_author < threshold".

    Every distinct cut of the sorted scores is tried: below the lowest score (no
    change), the midpoint between each two neighbouring distinct scores, and just
    above the highest (all changes). Ties in F1 go to the lowest threshold.
    """
    scores = np.asarray(same_author, dtype=np.float64)
    truth = np.asarray(changes, dtype=np.int64)
    if len(scores) == 0 or len(scores) != len(truth):
        raise ValueError(f"need as many scores as boundaries (and some): {len(scores)} vs {len(truth)}")
    order = np.argsort(scores, kind="stable")
    s, t = scores[order], truth[order].astype(np.float64)
    n, positives = len(s), float(t.sum())
    cuts = np.concatenate([[0], np.nonzero(s[1:] > s[:-1])[0] + 1, [n]])  # the first `cut` are "change"
    tp1 = np.concatenate([[0.0], np.cumsum(t)])[cuts]
    fp1 = cuts - tp1
    fn1 = positives - tp1
    tp0 = (n - cuts) - fn1
    macro = (_f1(tp1, fp1, fn1) + _f1(tp0, fn1, fp1)) / 2
    best = int(np.argmax(macro))
    cut = int(cuts[best])
    if cut == 0:
        threshold = float(s[0])
    elif cut == n:
        threshold = float(np.nextafter(s[-1], np.inf))
    else:
        threshold = float((s[cut - 1] + s[cut]) / 2)
        if threshold <= s[cut - 1]:  # neighbouring floats: the midpoint rounds down onto the lower one
            threshold = float(s[cut])
    return threshold, float(macro[best])
