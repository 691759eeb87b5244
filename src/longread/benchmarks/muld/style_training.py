"""Train the style-change baseline's same-author classifier on MuLD style-change files.

A record's ``input`` is the paragraphs joined by ``"\\n"``; ``output[0]`` is the
PAN truth as a JSON string (:mod:`longread.models.style_pairs.documents` says
what it must hold). A record that breaks a rule is a
:class:`~longread.benchmarks.muld.records.RecordProblem` naming the file and line;
the other records are still read.

The threshold is the one that maximises PAN's change F1 ("change where
P(same) < threshold", :func:`~longread.models.style_pairs.scoring.best_threshold`)
over the adjacent pairs of the validation file when one is given, else of the
training file. Records that cannot be used are listed in the summary, never
silently skipped.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from longread.benchmarks.muld.records import MuldRecord, RecordProblem, read_records
from longread.errors import BadInputError
from longread.files import read_bytes
from longread.models.errors import ModelSpecError
from longread.models.style_pairs.classifier import FEATURE_KINDS
from longread.models.style_pairs.documents import (
    StyleDocument,
    parse_truth,
    require_documents,
    split_paragraphs,
)
from longread.models.style_pairs.featurizer import Featurizer
from longread.models.style_pairs.scoring import best_threshold
from longread.models.style_pairs.train import adjacent_scores, fit_model


def document_from_record(record: MuldRecord, fallback_id: str) -> StyleDocument:
    """One record as a :class:`StyleDocument`; ValueError says what is wrong with it."""
    paragraphs = split_paragraphs(record.input)
    if not record.output:
        raise ValueError("the record has no output (the PAN truth JSON)")
    changes, authors = parse_truth(record.output[0], len(paragraphs))
    doc_id = str(record.metadata_json().get("id", fallback_id))
    return StyleDocument(id=doc_id, paragraphs=paragraphs, changes=changes, paragraph_authors=authors)


def read_style_documents(path: str | Path) -> tuple[list[StyleDocument], list[RecordProblem]]:
    """Every usable document of a MuLD style-change file, and a problem per record that is not."""
    source = read_records(Path(path))
    documents: list[StyleDocument] = []
    problems = list(source.problems)
    for line, record in source.records:
        try:
            documents.append(document_from_record(record, f"line-{line}"))
        except ValueError as exc:
            problems.append(
                RecordProblem(
                    str(path),
                    line,
                    str(exc),
                    "fix or drop this record; the PAN truth must match its paragraphs (one per line)",
                )
            )
    return documents, problems


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
