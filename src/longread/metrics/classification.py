"""Classification F1 and accuracy (character archetype: Hero/Villain), on a 0–1 scale.

Rule: the classes are every label that occurs in the truth **or** the
predictions (scikit-learn's ``f1_score`` default). Per class,
F1 = 2·TP / (2·TP + FP + FN) — never 0/0, since a class in that union has a
true or a predicted instance. Macro F1 is the unweighted mean over those
classes, so a prediction outside the label set (say "unknown") becomes a class
of F1 0 and pulls the macro mean down, as it does in scikit-learn. Accuracy is
the share of exact label matches. Labels are compared as given (normalise case
and wording before calling).

For bootstrap intervals, :func:`macro_f1` over the rows of a resample is cheap
(one pass over ~100 labels).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ClassScore:
    label: str
    precision: float
    recall: float
    f1: float
    support: int  # instances of this label in the truth


@dataclass(frozen=True)
class ClassificationScores:
    per_class: tuple[ClassScore, ...]  # sorted by label
    macro_f1: float
    accuracy: float
    n: int


def _check(truth: Sequence[str], predicted: Sequence[str]) -> None:
    if len(truth) != len(predicted):
        raise ValueError(f"{len(truth)} true labels but {len(predicted)} predictions; they must pair up")
    if not truth:
        raise ValueError("no labels to score")


def classification_scores(truth: Sequence[str], predicted: Sequence[str]) -> ClassificationScores:
    """Per-class precision/recall/F1, macro F1 and accuracy over paired labels."""
    _check(truth, predicted)
    true_positive: Counter[str] = Counter()
    false_positive: Counter[str] = Counter()
    false_negative: Counter[str] = Counter()
    for gold, guess in zip(truth, predicted, strict=True):
        if gold == guess:
            true_positive[gold] += 1
        else:
            false_positive[guess] += 1
            false_negative[gold] += 1
    per_class = []
    for label in sorted(set(truth) | set(predicted)):
        tp, fp, fn = true_positive[label], false_positive[label], false_negative[label]
        per_class.append(
            ClassScore(
                label=label,
                precision=tp / (tp + fp) if tp + fp else 0.0,
                recall=tp / (tp + fn) if tp + fn else 0.0,
                f1=2 * tp / (2 * tp + fp + fn),
                support=tp + fn,
            )
        )
    return ClassificationScores(
        per_class=tuple(per_class),
        macro_f1=sum(score.f1 for score in per_class) / len(per_class),
        accuracy=sum(true_positive.values()) / len(truth),
        n=len(truth),
    )


def macro_f1(truth: Sequence[str], predicted: Sequence[str]) -> float:
    """Macro F1 over the labels in truth ∪ predictions (0–1)."""
    return classification_scores(truth, predicted).macro_f1


def accuracy(truth: Sequence[str], predicted: Sequence[str]) -> float:
    """Share of predictions equal to the truth (0–1)."""
    _check(truth, predicted)
    return sum(1 for gold, guess in zip(truth, predicted, strict=True) if gold == guess) / len(truth)
