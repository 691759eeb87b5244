"""The PAN style-change layout: ``problem-N.txt`` + ``truth-problem-N.json``, checked, read and written.

A problem file holds one paragraph per line (blank lines are not paragraphs).
Its truth (PAN 2019–2023) holds ``authors`` (how many wrote the document),
``changes`` (one 0/1 per adjacent paragraph pair: 1 = the author changes there)
and, from PAN 2021, ``paragraph-authors`` (the author of each paragraph, numbered
from 1 in order of first appearance). PAN also wrote ``multi-author`` (0/1,
2019–2022), ``site`` and ``structure`` (2019–2020); they are checked where they
can be (``multi-author`` must agree with ``authors``) and otherwise kept aside.

In MuLD's layout a style-change record is ``input`` = the paragraphs joined
with ``"\\n"`` and ``output`` = ``[truth as a JSON string]``
(:func:`truth_json`: ``authors``, ``changes``, ``paragraph-authors`` in that order).
:func:`export_pan` writes such a file as a PAN folder, plus ``meta-problem-N.json``
holding each record's ``metadata`` (PAN tools ignore it), so that
:func:`import_pan` gives back the same bytes. A truth that does not match its
problem is a :class:`BadInputError` naming the file and what is wrong; reading a
folder goes on past a bad problem and reports it.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longread.benchmarks.muld.records import MuldRecord, read_records, write_records
from longread.errors import BadInputError
from longread.files import atomic_write_text, read_text

_PROBLEM = re.compile(r"^problem-(\d+)\.txt$")
_KNOWN_KEYS = ("authors", "changes", "paragraph-authors")
_TRUTH_HINT = "fix the truth file so it describes the problem's paragraphs (one paragraph per line)"


@dataclass(frozen=True)
class PanTruth:
    authors: int
    changes: tuple[int, ...]
    paragraph_authors: tuple[int, ...] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """Other keys of a PAN truth file (``site``, ``structure`` …) as read; ``multi-author`` is derived."""

    @classmethod
    def of_labels(cls, labels: Sequence[object]) -> PanTruth:
        """The truth of paragraphs whose authors are ``labels`` (any hashable names), PAN-numbered."""
        numbers: dict[object, int] = {}
        for label in labels:
            numbers.setdefault(label, len(numbers) + 1)
        authors = tuple(numbers[label] for label in labels)
        changes = tuple(int(a != b) for a, b in itertools.pairwise(authors))
        return cls(len(numbers), changes, authors)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"authors": self.authors, "changes": list(self.changes)}
        if self.paragraph_authors is not None:
            out["paragraph-authors"] = list(self.paragraph_authors)
        return out

    def pan_json(self) -> dict[str, Any]:
        """What a PAN truth file holds: the MuLD truth plus ``multi-author`` and any kept extras."""
        return {**self.as_json(), "multi-author": int(self.authors > 1), **self.extra}


def truth_json(truth: PanTruth) -> str:
    """The MuLD ``output`` string of a style-change record."""
    return json.dumps(truth.as_json(), ensure_ascii=False)


def split_paragraphs(text: str) -> list[str]:
    """A PAN problem's paragraphs: its non-blank lines."""
    return [line for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n") if line.strip()]


def parse_truth(text: str, path: str | Path) -> PanTruth:
    """A truth file's JSON → :class:`PanTruth`; a wrong shape is a BadInputError naming the field."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInputError(path, f"not valid JSON ({exc.msg} at line {exc.lineno})", _TRUTH_HINT) from None
    if not isinstance(value, dict):
        raise BadInputError(path, f"a JSON {type(value).__name__}, not an object", _TRUTH_HINT)
    authors = value.get("authors")
    if isinstance(authors, bool) or not isinstance(authors, int) or authors < 1:
        raise BadInputError(path, f"'authors' must be a whole number ≥ 1 (got {authors!r})", _TRUTH_HINT)
    changes = _int_list(value.get("changes"), "changes", path, allowed=(0, 1))
    if changes is None:
        raise BadInputError(path, "no 'changes' list", _TRUTH_HINT)
    paragraph_authors = _int_list(value.get("paragraph-authors"), "paragraph-authors", path)
    if paragraph_authors is not None and any(a < 1 for a in paragraph_authors):
        raise BadInputError(
            path, "'paragraph-authors' holds a number < 1 (authors count from 1)", _TRUTH_HINT
        )
    multi = value.get("multi-author")
    if multi is not None and int(multi) != int(authors > 1):
        raise BadInputError(
            path, f"'multi-author' is {multi!r} but 'authors' is {authors}", "make the two agree"
        )
    extra = {k: v for k, v in value.items() if k not in _KNOWN_KEYS and k != "multi-author"}
    return PanTruth(
        authors, tuple(changes), None if paragraph_authors is None else tuple(paragraph_authors), extra
    )


def _int_list(value: object, name: str, path: str | Path, allowed: tuple[int, ...] = ()) -> list[int] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise BadInputError(path, f"'{name}' is not a list", _TRUTH_HINT)
    out: list[int] = []
    for item in value:
        # PAN writes 0/1; the Hugging Face loader turns them into booleans, so both are read.
        number = int(item) if isinstance(item, bool) else item
        if not isinstance(number, int) or (allowed and number not in allowed):
            raise BadInputError(
                path, f"'{name}' holds {item!r}; expected {allowed or 'whole numbers'}", _TRUTH_HINT
            )
        out.append(number)
    return out


def truth_mismatches(truth: PanTruth, paragraphs: int) -> list[str]:
    """Every way ``truth`` fails to describe a problem of ``paragraphs`` paragraphs (empty: it matches)."""
    problems: list[str] = []
    if len(truth.changes) != max(paragraphs - 1, 0):
        problems.append(
            f"'changes' has {len(truth.changes)} entries but the problem has {paragraphs} paragraphs "
            f"(expected {max(paragraphs - 1, 0)}, one per adjacent pair)"
        )
    pa = truth.paragraph_authors
    if pa is None:
        if truth.authors == 1 and any(truth.changes):
            problems.append("'authors' is 1 but 'changes' marks a change")
        if truth.authors > 1 and paragraphs > 1 and not any(truth.changes):
            problems.append(f"'authors' is {truth.authors} but 'changes' marks no change")
        return problems
    if len(pa) != paragraphs:
        problems.append(
            f"'paragraph-authors' has {len(pa)} entries but the problem has {paragraphs} paragraphs"
        )
    if len(set(pa)) != truth.authors:
        problems.append(
            f"'authors' is {truth.authors} but 'paragraph-authors' names {len(set(pa))} distinct authors"
        )
    implied = [int(a != b) for a, b in itertools.pairwise(pa)]
    wrong = [i for i, (c, d) in enumerate(zip(truth.changes, implied, strict=False)) if c != d]
    if wrong:
        at = wrong[0]
        problems.append(
            f"'changes' disagrees with 'paragraph-authors' at {len(wrong)} boundaries (first: after "
            f"paragraph {at + 1}, changes says {truth.changes[at]}, authors {pa[at]}→{pa[at + 1]})"
        )
    return problems


def check_truth(truth: PanTruth, paragraphs: int, path: str | Path) -> None:
    problems = truth_mismatches(truth, paragraphs)
    if problems:
        raise BadInputError(path, "truth does not match its problem: " + "; ".join(problems), _TRUTH_HINT)


@dataclass
class PanFolder:
    folder: Path
    records: list[tuple[str, MuldRecord]] = field(default_factory=list)
    """(problem file name, record) for every good problem, in problem-number order."""
    problems: list[BadInputError] = field(default_factory=list)


def problem_files(folder: Path) -> list[tuple[int, Path]]:
    if not folder.is_dir():
        raise BadInputError(folder, "is not a folder", "give the PAN folder holding problem-N.txt files")
    found = sorted(
        (int(match.group(1)), path)
        for path in folder.iterdir()
        if (match := _PROBLEM.match(path.name)) is not None
    )
    if not found:
        raise BadInputError(folder, "holds no problem-N.txt files", "is this a PAN style-change folder?")
    return found


def read_pan_problem(path: Path) -> MuldRecord:
    """One problem and its truth (and ``meta-`` file if there is one) → a MuLD record."""
    paragraphs = split_paragraphs(read_text(path))
    truth_path = path.with_name(f"truth-{path.stem}.json")
    if not truth_path.is_file():
        raise BadInputError(truth_path, "missing", f"every {path.name} needs its truth file beside it")
    truth = parse_truth(read_text(truth_path, max_line_chars=None), truth_path)
    check_truth(truth, len(paragraphs), truth_path)
    meta_path = path.with_name(f"meta-{path.stem}.json")
    if meta_path.is_file():
        metadata = read_text(meta_path, max_line_chars=None).removesuffix("\n")
    else:
        fields: dict[str, Any] = {"id": path.stem, "pan_file": path.name}
        if truth.extra:
            fields["pan_truth_extra"] = truth.extra
        metadata = json.dumps(fields, ensure_ascii=False, sort_keys=True)
    return MuldRecord("\n".join(paragraphs), (truth_json(truth),), metadata)


def read_pan_folder(folder: str | Path) -> PanFolder:
    """Every problem of a PAN folder; a bad one is recorded in ``problems`` and the rest still read."""
    folder = Path(folder)
    out = PanFolder(folder)
    for _, path in problem_files(folder):
        try:
            out.records.append((path.name, read_pan_problem(path)))
        except BadInputError as exc:
            out.problems.append(exc)
    return out


def import_pan(folder: str | Path, out: str | Path) -> PanFolder:
    """A PAN folder → a MuLD style-change file (``.jsonl[.bz2]``); bad problems are skipped and returned."""
    read = read_pan_folder(folder)
    if not read.records:
        raise BadInputError(folder, "no usable problem", "; ".join(str(p) for p in read.problems[:3]))
    write_records(out, (record for _, record in read.records))
    return read


def record_truth(record: MuldRecord, path: str | Path, line: int) -> tuple[list[str], PanTruth]:
    """A style-change record's paragraphs and checked truth (errors name the file and line)."""
    where = f"{path}, line {line}"
    paragraphs = split_paragraphs(record.input)
    if len(record.output) != 1:
        raise BadInputError(
            path, f"{len(record.output)} references; a style-change record has one truth", line=line
        )
    truth = parse_truth(record.output[0], where)
    check_truth(truth, len(paragraphs), where)
    return paragraphs, truth


def export_pan(muld_file: str | Path, folder: str | Path) -> list[BadInputError]:
    """Write a MuLD style-change file as a PAN folder (problem numbers follow the record order from 1).

    Returns the problems met (bad lines, truths that do not match); those records are skipped.
    """
    folder = Path(folder)
    if folder.is_dir() and any(_PROBLEM.match(p.name) for p in folder.iterdir()):
        raise BadInputError(folder, "already holds problem-N.txt files", "export into an empty or new folder")
    folder.mkdir(parents=True, exist_ok=True)
    read = read_records(muld_file)
    problems: list[BadInputError] = [p.as_error() for p in read.problems]
    number = 0
    for line, record in read.records:
        try:
            paragraphs, truth = record_truth(record, muld_file, line)
        except BadInputError as exc:
            problems.append(exc)
            continue
        number += 1
        atomic_write_text(folder / f"problem-{number}.txt", "\n".join(paragraphs) + "\n")
        atomic_write_text(
            folder / f"truth-problem-{number}.json", json.dumps(truth.pan_json(), ensure_ascii=False) + "\n"
        )
        if record.metadata is not None:
            atomic_write_text(folder / f"meta-problem-{number}.json", record.metadata + "\n")
    return problems
