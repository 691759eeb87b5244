"""PAN's style-change F1 (PAN 2021/2022 style change detection evaluator), on a 0–1 scale.

The official rule (``compute_score_multiple_predictions`` in pan-webis-de/pan-code,
clef21 and clef22 ``style-change-detection/evaluator.py``): the per-document
``changes`` lists (one 0/1 per boundary between consecutive paragraphs) of all
documents are **concatenated** — boundaries are pooled, documents are not
averaged — and scored with scikit-learn's
``f1_score(truth, predicted, average="macro", labels=[0, 1], zero_division=0)``:
the unweighted mean of the F1 of "no change" and the F1 of "change". Per label,
F1 = 2·TP / (2·TP + FP + FN), and 0 when that is 0/0 (``zero_division=0``, as in
clef22; clef21 leaves sklearn's default, which also scores 0).

Where the official evaluator skips a document whose prediction has the wrong
length (clef22, with a printed note), here it is an error naming the document:
nothing is dropped silently.

Also from PAN 2021 (task 1, "multi-author"): per document 1 if it has any
change, macro F1 over the labels present (:func:`multi_author_f1`). Neither the
2021 nor the 2022 evaluator reports a number-of-authors accuracy (that was PAN
2019's task, scored by accuracy of single/multi and OCI), so there is none here.

For bootstrap intervals a task stores :func:`change_counts` per document; the
pooled F1 of any resample is :func:`style_change_f1_from_counts` of the summed
counts, equal to the pooled computation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from longread.errors import BadInputError

CHANGE_LABELS = (0, 1)


def _document_names(n: int, documents: Sequence[str] | None) -> Sequence[str]:
    if documents is None:
        return [f"document {i + 1}" for i in range(n)]
    if len(documents) != n:
        raise ValueError(f"{n} documents but {len(documents)} document names")
    return documents


def check_lengths(truth: Sequence[int], predicted: Sequence[int], document: str) -> None:
    """A prediction must have one label per truth label (one per paragraph boundary for ``changes``)."""
    if len(truth) != len(predicted):
        raise BadInputError(
            None,
            f"the truth has {len(truth)} labels (paragraph boundaries) "
            f"but the prediction has {len(predicted)}",
            "predict one 0/1 per boundary between consecutive paragraphs",
            item=document,
        )


def _label_f1(tp: int, fp: int, fn: int) -> float:
    denominator = 2 * tp + fp + fn
    return 2 * tp / denominator if denominator else 0.0


def pooled_macro_f1(
    truth: Sequence[Sequence[int]],
    predicted: Sequence[Sequence[int]],
    labels: Sequence[int],
    documents: Sequence[str] | None = None,
) -> float:
    """PAN's ``compute_score_multiple_predictions``: documents' lists concatenated, macro F1 over ``labels``.

    A predicted or true value outside ``labels`` still counts as a miss for the
    labels it is confused with, as in scikit-learn.
    """
    if len(truth) != len(predicted):
        raise ValueError(f"{len(truth)} true documents but {len(predicted)} predicted ones")
    if not labels:
        raise ValueError("no labels to average over")
    names = _document_names(len(truth), documents)
    tp = dict.fromkeys(labels, 0)
    fp = dict.fromkeys(labels, 0)
    fn = dict.fromkeys(labels, 0)
    for gold_list, guess_list, name in zip(truth, predicted, names, strict=True):
        check_lengths(gold_list, guess_list, name)
        for gold, guess in zip(gold_list, guess_list, strict=True):
            if gold == guess:
                if gold in tp:
                    tp[gold] += 1
                continue
            if guess in fp:
                fp[guess] += 1
            if gold in fn:
                fn[gold] += 1
    return sum(_label_f1(tp[label], fp[label], fn[label]) for label in labels) / len(labels)


def style_change_f1(
    truth: Sequence[Sequence[int]], predicted: Sequence[Sequence[int]], documents: Sequence[str] | None = None
) -> float:
    """PAN's style-change F1 over all documents' ``changes`` (0–1)."""
    names = _document_names(len(truth), documents)
    for changes, name in zip(truth, names, strict=False):
        _check_binary(changes, name, "truth")
    for changes, name in zip(predicted, names, strict=False):
        _check_binary(changes, name, "prediction")
    return pooled_macro_f1(truth, predicted, CHANGE_LABELS, names)


def _check_binary(changes: Sequence[int], document: str, side: str) -> None:
    bad = [value for value in changes if value not in CHANGE_LABELS]
    if bad:
        raise BadInputError(
            None, f"the {side} has change labels other than 0 and 1: {bad[:5]}", "use 0 or 1", item=document
        )


def change_counts(truth: Sequence[int], predicted: Sequence[int], document: str) -> list[int]:
    """One document's boundary counts ``[TP, FP, FN, TN]`` with "change" (1) as the positive label."""
    check_lengths(truth, predicted, document)
    _check_binary(truth, document, "truth")
    _check_binary(predicted, document, "prediction")
    counts = [0, 0, 0, 0]
    for gold, guess in zip(truth, predicted, strict=True):
        counts[(0 if guess else 2) if gold else (1 if guess else 3)] += 1
    return counts


def sum_change_counts(rows: Iterable[Sequence[int]]) -> list[int]:
    """Element-wise sum of per-document :func:`change_counts`."""
    total = [0, 0, 0, 0]
    for counts in rows:
        if len(counts) != 4:
            raise ValueError(f"change counts are [TP, FP, FN, TN]; got {list(counts)}")
        for i, value in enumerate(counts):
            total[i] += value
    return total


def style_change_f1_from_counts(summed: Sequence[int]) -> float:
    """PAN's style-change F1 from summed ``[TP, FP, FN, TN]``: mean of the F1 of "change" and "no change"."""
    tp, fp, fn, tn = summed
    # For "no change" the roles swap: its true positives are TN, its false positives are FN.
    return (_label_f1(tp, fp, fn) + _label_f1(tn, fn, fp)) / 2


def is_multi_author(changes: Sequence[int]) -> int:
    """PAN 2021's "multi-author" label of one document: 1 if it has any style change, else 0."""
    return int(any(changes))


def multi_author_f1(truth: Sequence[int], predicted: Sequence[int]) -> float:
    """PAN 2021 task 1: macro F1 of per-document 0/1 "multi-author" labels over the labels present (0–1).

    The clef21 evaluator calls ``f1_score(truth, solution, average="macro")`` without
    ``labels``, so the classes are those present in truth or predictions. Derive the
    labels from ``changes`` with :func:`is_multi_author` when the model predicts changes only.
    """
    if len(truth) != len(predicted):
        raise ValueError(f"{len(truth)} true documents but {len(predicted)} predicted ones")
    if not truth:
        raise ValueError("no documents to score")
    labels = sorted(set(truth) | set(predicted))
    return pooled_macro_f1([truth], [predicted], labels, ["all documents"])
