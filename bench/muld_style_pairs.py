"""MuLD style-change baseline on held-out Gutenberg authors: AUC, PAN change F1 and time per document.

    .venv/bin/python bench/muld_style_pairs.py [--train-docs 60] [--test-docs 40] [--paragraphs 20]
        [--features stylometric minilm] [--seed 0]

Documents are made by ``tests/style_pairs_fixture.py`` from real novels: training
documents from one set of authors, test documents from disjoint held-out authors.
For each feature kind: the untrained scorer (document-standardised cosine,
default threshold) and the classifier trained by ``train_style_pairs`` (its
threshold learned on the training documents) are scored on the test documents'
adjacent pairs: ROC AUC of P(same author) against the truth, PAN change F1 at the
threshold, and seconds per document (feature extraction included).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.models.style_pairs.authors import split_authors, style_records

from longread.benchmarks.muld.records import write_records
from longread.benchmarks.muld.style_training import read_style_documents, train_style_pairs
from longread.models.style_pairs.backend import StylePairBackend, load_style_backend
from longread.models.style_pairs.requests import PairScoreRequest
from longread.models.style_pairs.scoring import pan_change_f1


def evaluate(backend: StylePairBackend, test_file: Path) -> tuple[float, float, float, float]:
    """(AUC, PAN change F1 at the backend's threshold, F1 of 'no change anywhere', seconds per document)."""
    from sklearn.metrics import roc_auc_score

    documents, problems = read_style_documents(test_file)
    assert not problems, problems
    started = time.perf_counter()
    results = backend.pair_scores([PairScoreRequest(tuple(doc.paragraphs)) for doc in documents])
    per_doc = (time.perf_counter() - started) / len(documents)
    scores = np.concatenate([np.asarray(r.same_author) for r in results])
    changes = np.concatenate([np.asarray(doc.changes) for doc in documents])
    auc = float(roc_auc_score(1 - changes, scores))
    f1 = pan_change_f1(changes.tolist(), (scores < backend.threshold).astype(int).tolist())
    return auc, f1, pan_change_f1(changes.tolist(), [0] * len(changes)), per_doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-docs", type=int, default=60)
    parser.add_argument("--test-docs", type=int, default=40)
    parser.add_argument("--paragraphs", type=int, default=20)
    parser.add_argument("--features", nargs="+", default=["stylometric", "minilm"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    train_authors, test_authors = split_authors(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        train_file, test_file = folder / "train.jsonl", folder / "test.jsonl"
        write_records(train_file, style_records(train_authors, args.train_docs, args.seed, args.paragraphs))
        write_records(test_file, style_records(test_authors, args.test_docs, args.seed + 1, args.paragraphs))
        print(
            f"{len(train_authors)} training authors, {len(test_authors)} held-out authors; "
            f"{args.train_docs} / {args.test_docs} documents of {args.paragraphs} paragraphs"
        )
        for kind in args.features:
            auc, f1, none_f1, per_doc = evaluate(load_style_backend(kind), test_file)
            print(
                f"{kind:12s} untrained  AUC {auc:.3f}  F1 {f1:.3f} (no-change F1 {none_f1:.3f})  "
                f"{per_doc:.3f} s/doc"
            )
            started = time.perf_counter()
            summary = train_style_pairs(train_file, kind, folder / f"{kind}.json", seed=args.seed)
            trained_in = time.perf_counter() - started
            auc, f1, none_f1, per_doc = evaluate(load_style_backend(str(summary.out)), test_file)
            print(
                f"{kind:12s} trained    AUC {auc:.3f}  F1 {f1:.3f} at threshold {summary.threshold:.3f}  "
                f"{per_doc:.3f} s/doc (trained in {trained_in:.1f} s)"
            )


if __name__ == "__main__":
    main()
