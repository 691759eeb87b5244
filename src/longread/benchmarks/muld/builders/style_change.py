"""Build MuLD style-change data: documents of 1–4 authors' paragraphs, train/validation/test, PAN truths.

Sources are works by named authors (:mod:`style_change_works`: Gutenberg books,
AO3 works JSONL …). Splits are by author, so no author is in two splits:

- test: the works tagged with ``test_relationship`` (MuLD holds out
  "Draco Malfoy/Harry Potter"), and the works of ``test_authors``; if neither
  names any work (Gutenberg has no relationships), a seeded ``test_fraction`` of
  the authors. Other works of a test author are dropped (reported), so the test
  authors are never seen in training.
- validation: a seeded ``validation_fraction`` of the remaining authors;
- train: the rest.

Within a split, documents are composed by :mod:`style_change_compose` (pools =
relationship / fandom / the whole corpus, see ``Work.pool``), each at least
``length_filter.min_tokens`` tokens. A record is ``input`` = the paragraphs, one
per line; ``output`` = ``[PAN truth JSON]`` (``authors``, ``changes``,
``paragraph-authors``); ``metadata`` = JSON with ``id``, ``split``, ``pool``,
``tokens``, ``authors`` (names, in PAN numbering order) and per paragraph its
source (work, author, chapter, paragraph index). Every random choice comes from
``random.Random`` seeded with ``f"{seed}:{purpose}"`` over sorted lists, so the
same sources and settings give byte-identical files.

Paragraph typography is made uniform by default (``typography``, see
:mod:`style_change_works`), so quote style does not give the author away.

Files: ``out`` ending in ``.jsonl``/``.jsonl.bz2`` is a template
(``x/style_change.jsonl.bz2`` → ``x/style_change_train.jsonl.bz2`` …); any other
``out`` is a folder that gets ``style_change_{split}.jsonl.bz2``. One build report
(``style_change.report.json``) covers all splits; a split without documents gets no file.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longread.benchmarks.muld.builders.report import BuildReport, LengthFilter, report_path
from longread.benchmarks.muld.builders.style_change_compose import Document, Supply, compose_many
from longread.benchmarks.muld.builders.style_change_works import (
    MIN_PARAGRAPH_WORDS,
    TYPOGRAPHY,
    Work,
    read_works,
)
from longread.benchmarks.muld.pan import truth_json
from longread.benchmarks.muld.records import MuldRecord, write_records
from longread.errors import BadInputError
from longread.text.tokenizers import load_tokenizer

SPLITS = ("train", "validation", "test")
TEST_RELATIONSHIP = "Draco Malfoy/Harry Potter"
POOL_BY = ("auto", "relationship", "fandom", "all")
_TEMPLATE_SUFFIXES = (".jsonl.bz2", ".jsonl", ".json.bz2", ".json")


@dataclass
class StyleChangeReport(BuildReport):
    """The build report plus the works used (with their split) and a summary per split."""

    works: dict[str, dict[str, Any]] = field(default_factory=dict)
    splits: dict[str, dict[str, Any]] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        out = super().as_json()
        out["splits"] = self.splits
        out["works"] = self.works
        return out


def split_paths(out: str | Path) -> dict[str, Path]:
    """Where each split goes (see the module docstring)."""
    out = Path(out)
    for suffix in _TEMPLATE_SUFFIXES:
        if out.name.endswith(suffix):
            stem = out.name.removesuffix(suffix)
            return {split: out.with_name(f"{stem}_{split}{suffix}") for split in SPLITS}
    return {split: out / f"style_change_{split}.jsonl.bz2" for split in SPLITS}


def style_change_report_path(out: str | Path) -> Path:
    """The one report of a build: beside the template, or ``style_change.report.json`` in the folder."""
    return report_path(_report_anchor(out))


def _report_anchor(out: str | Path) -> Path:
    out = Path(out)
    return out if out.name.endswith(_TEMPLATE_SUFFIXES) else out / "style_change.jsonl.bz2"


def has_relationship(work: Work, relationship: str | None) -> bool:
    wanted = (relationship or "").casefold()
    return bool(wanted) and wanted in {r.casefold() for r in work.relationships}


def parse_documents(text: str) -> dict[str, int | None]:
    """``--documents``: ``N`` (each split), ``all``, or ``train=N,validation=M,test=K``.

    ``all`` (and a split left out of the list) means as many as the paragraphs allow.
    """
    text = text.strip()
    if "=" not in text:
        count = None if text == "all" else _count(text)
        return dict.fromkeys(SPLITS, count)
    counts: dict[str, int | None] = dict.fromkeys(SPLITS)
    for part in text.split(","):
        name, _, value = part.partition("=")
        if name.strip() not in SPLITS:
            raise ValueError(f"--documents: unknown split {name.strip()!r}; use {', '.join(SPLITS)}")
        counts[name.strip()] = None if value.strip() == "all" else _count(value)
    return counts


def _count(value: str) -> int:
    if not value.strip().isdigit():
        raise ValueError(f"--documents: {value!r} is not a whole number (or 'all')")
    return int(value)


def _fraction_of(authors: list[str], fraction: float, rng: random.Random, *, keep: int) -> set[str]:
    """A seeded ``fraction`` of ``authors`` (at least one if fraction > 0), leaving ``keep`` out."""
    if fraction <= 0 or len(authors) <= keep:
        return set()
    size = min(max(1, round(fraction * len(authors))), len(authors) - keep)
    return set(rng.sample(authors, size))


def assign_splits(
    works: list[Work],
    report: StyleChangeReport,
    rng: random.Random,
    *,
    test_relationship: str | None,
    test_authors: Sequence[str],
    test_fraction: float,
    validation_fraction: float,
) -> dict[str, list[Work]]:
    """Works per split (the module's rules); dropped works go to ``report``."""
    wanted = {a.casefold() for a in test_authors}
    found = {w.author.casefold() for w in works}
    missing = sorted(a for a in test_authors if a.casefold() not in found)
    if missing:
        raise BadInputError(
            None, f"test author(s) not in the sources: {missing}", "spell them as the works name them"
        )
    test = [w for w in works if has_relationship(w, test_relationship) or w.author.casefold() in wanted]
    held_out = "test relationship / authors"
    if not test:
        authors = sorted({w.author for w in works})
        chosen = _fraction_of(authors, test_fraction, rng, keep=1)
        test = [w for w in works if w.author in chosen]
        held_out = f"seeded fraction {test_fraction} of the authors"
    test_ids = {w.id for w in test}
    test_names = {w.author for w in test}
    rest: list[Work] = []
    for work in works:
        if work.id in test_ids:
            continue
        if work.author in test_names:
            report.drop(f"{work.id} ({work.source})", "author held out for test: work outside the test set")
            continue
        rest.append(work)
    remaining = sorted({w.author for w in rest})
    validation_names = _fraction_of(remaining, validation_fraction, rng, keep=1)
    splits = {
        "train": [w for w in rest if w.author not in validation_names],
        "validation": [w for w in rest if w.author in validation_names],
        "test": test,
    }
    report.settings["held_out"] = {
        "rule": held_out,
        **{f"{split}_authors": sorted({w.author for w in ws}) for split, ws in splits.items()},
    }
    return splits


def _record(document: Document, split: str, number: int, length: LengthFilter) -> MuldRecord:
    metadata = {
        "id": f"style-change-{split}-{number:05d}",
        "split": split,
        "pool": document.pool,
        "tokens": document.tokens,
        "tokenizer": length.tokenizer,
        "authors": document.authors(),
        "paragraphs": [p.source() for p in document.paragraphs],
    }
    return MuldRecord(
        document.text,
        (truth_json(document.truth()),),
        json.dumps(metadata, ensure_ascii=False, sort_keys=True),
    )


def build_style_change(
    sources: Sequence[Path],
    out: str | Path,
    *,
    length_filter: LengthFilter | None = None,
    seed: int = 0,
    max_authors: int = 4,
    documents: int | Mapping[str, int | None] | None = None,
    test_relationship: str | None = TEST_RELATIONSHIP,
    test_authors: Sequence[str] = (),
    test_fraction: float = 0.2,
    validation_fraction: float = 0.1,
    min_paragraph_words: int = MIN_PARAGRAPH_WORDS,
    pool_by: str = "auto",
    typography: str = "plain",
) -> StyleChangeReport:
    """Read the sources, split by author, compose and write each split; returns the report (also written)."""
    length = length_filter or LengthFilter()
    if max_authors < 1:
        raise ValueError("max_authors must be ≥ 1")
    if pool_by not in POOL_BY:
        raise ValueError(f"pool_by must be one of {', '.join(POOL_BY)}")
    if typography not in TYPOGRAPHY:
        raise ValueError(f"typography must be one of {', '.join(TYPOGRAPHY)}")
    counts = dict(documents) if isinstance(documents, Mapping) else dict.fromkeys(SPLITS, documents)
    paths = split_paths(out)
    report = StyleChangeReport(
        "style-change",
        [str(s) for s in sources],
        {
            **length.describe(),
            "seed": seed,
            "max_authors": max_authors,
            "documents": {split: counts.get(split) for split in SPLITS},
            "test_relationship": test_relationship,
            "test_authors": list(test_authors),
            "test_fraction": test_fraction,
            "validation_fraction": validation_fraction,
            "min_paragraph_words": min_paragraph_words,
            "pool_by": pool_by,
            "typography": typography,
        },
    )
    works = read_works(sources, load_tokenizer(length.tokenizer), report, min_paragraph_words, typography)
    if not works:
        raise BadInputError(None, "no usable work in the sources", "see the dropped works in the report")
    splits = assign_splits(
        works,
        report,
        random.Random(f"{seed}:splits"),
        test_relationship=test_relationship,
        test_authors=test_authors,
        test_fraction=test_fraction,
        validation_fraction=validation_fraction,
    )
    for split in SPLITS:
        plan = _SplitPlan(
            split, counts.get(split), paths[split], seed, max_authors, pool_by, test_relationship
        )
        _build_split(plan, splits[split], report, length)
    report.write(_report_anchor(out))
    return report


@dataclass(frozen=True)
class _SplitPlan:
    split: str
    count: int | None
    path: Path
    seed: int
    max_authors: int
    pool_by: str
    test_relationship: str | None


def _build_split(
    plan: _SplitPlan, works: list[Work], report: StyleChangeReport, length: LengthFilter
) -> None:
    split, pool_by, path = plan.split, plan.pool_by, plan.path
    pooled: list[tuple[str, Work]] = []
    for work in works:
        held_out = split == "test" and has_relationship(work, plan.test_relationship)
        pool = plan.test_relationship if held_out else work.pool(pool_by)
        if pool is None:
            report.drop(f"{work.id} ({work.source})", f"no {pool_by} tag to pool it by")
            continue
        pooled.append((pool, work))
        report.works[work.id] = {"split": split, "pool": pool, **work.summary()}
    if not pooled and plan.count != 0:
        report.drop(f"{split} documents", "no work in this split (no author was assigned to it)")
    supply = Supply.of(pooled)
    made, stopped = compose_many(
        supply, random.Random(f"{plan.seed}:{split}"), length, plan.max_authors, plan.count
    )
    records = [_record(document, split, number, length) for number, document in enumerate(made, 1)]
    for record, document in zip(records, made, strict=True):
        report.keep(
            str(record.metadata_json()["id"]),
            split=split,
            authors=len(document.authors()),
            tokens=document.tokens,
            paragraphs=len(document.paragraphs),
        )
    if stopped and pooled:
        report.drop(f"{split} documents", stopped)
    if records:
        write_records(path, records)
        report.files[split] = path
    report.splits[split] = {
        "file": str(path) if records else None,
        "documents": len(records),
        "documents_by_authors": dict(sorted(Counter(len(d.authors()) for d in made).items())),
        "works": len(pooled),
        "authors": len({w.author for _, w in pooled}),
        "unused_tokens_by_pool": supply.leftover(),
    }
