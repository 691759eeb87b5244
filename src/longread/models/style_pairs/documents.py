"""Style-change documents, what the classifier trains and picks its threshold on: paragraphs and PAN truth.

The paragraphs are one per line (the PAN layout; blank lines are not paragraphs,
as the style-change task reads them). The PAN truth is a JSON string: ``authors``
(distinct authors, ≥ 1), ``changes`` (one 0/1 per adjacent paragraph pair, 1 = the
author changes) and, from PAN 2021 on, ``paragraph-authors`` (one author number per
paragraph). The truth must match its problem: as many changes as paragraph pairs, as
many paragraph authors as paragraphs, ``changes[i] == (author[i] != author[i + 1])``
and ``authors`` equal to the number of distinct paragraph authors. Reading them from MuLD files is the
benchmark's business (``longread.benchmarks.muld.style_training``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longread.errors import BadInputError


@dataclass(frozen=True)
class StyleDocument:
    id: str
    paragraphs: tuple[str, ...]
    changes: tuple[int, ...]
    """1 where paragraph i + 1 has another author than paragraph i."""
    paragraph_authors: tuple[int, ...] | None
    """Author number of each paragraph (None when the truth predates PAN 2021 and lacks it)."""


def split_paragraphs(text: str) -> tuple[str, ...]:
    """The PAN layout's paragraphs: one per line, blank lines skipped (the task's ``paragraphs_of`` rule)."""
    return tuple(line for line in text.split("\n") if line.strip())


def _int_list(truth: dict[str, Any], key: str) -> list[int] | None:
    value = truth.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ValueError(f"truth field {key!r} must be a list of integers")
    return list(value)


def parse_truth(text: str, n_paragraphs: int) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    """(changes, paragraph authors) of a PAN truth JSON string; ValueError says what does not match."""
    try:
        truth = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the PAN truth (output[0]) is not JSON: {exc.msg} at char {exc.pos}") from exc
    if not isinstance(truth, dict):
        raise ValueError("the PAN truth (output[0]) must be a JSON object")
    changes = _int_list(truth, "changes")
    if changes is None:
        raise ValueError("the PAN truth has no 'changes' list")
    if len(changes) != max(0, n_paragraphs - 1):
        raise ValueError(
            f"the truth has {len(changes)} changes but the problem has {n_paragraphs} paragraphs "
            f"({max(0, n_paragraphs - 1)} boundaries)"
        )
    if any(c not in (0, 1) for c in changes):
        raise ValueError("'changes' must hold only 0 and 1")
    authors = _int_list(truth, "paragraph-authors")
    if authors is not None:
        if len(authors) != n_paragraphs:
            raise ValueError(
                f"the truth has {len(authors)} paragraph-authors "
                f"but the problem has {n_paragraphs} paragraphs"
            )
        for index, change in enumerate(changes):
            if change != int(authors[index] != authors[index + 1]):
                raise ValueError(
                    f"changes[{index}] = {change} contradicts paragraph-authors "
                    f"{authors[index]} → {authors[index + 1]}"
                )
        count = truth.get("authors")
        if count is not None and count != len(set(authors)):
            raise ValueError(f"'authors' = {count} but paragraph-authors names {len(set(authors))} authors")
    return tuple(changes), (tuple(authors) if authors is not None else None)


def require_documents(path: str | Path, documents: list[StyleDocument], what: str) -> None:
    if not any(len(doc.paragraphs) >= 2 for doc in documents):
        raise BadInputError(
            path,
            f"no usable style-change document with at least two paragraphs to {what}",
            "give a MuLD style-change file (input: paragraphs one per line; output[0]: PAN truth JSON)",
        )
