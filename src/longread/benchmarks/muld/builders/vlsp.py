"""Build MuLD's VLSP task (very long scientific papers → their abstract) from the VLSP files.

Layout of a source (a folder, searched recursively, or the files themselves):
``<id>.main.txt`` (the paper, math as ``@xmath``), ``<id>.abstract.txt`` (the
arXiv abstract) and, where present, ``<id>.abstract-long.txt`` (the abstract
found in the paper), each optionally ``.gz``/``.bz2``/``.zst``. Other files are
listed in the report as ignored.

A record: ``input`` = the main text as read (UTF-8, BOM dropped, CRLF → LF);
``output`` = [arXiv abstract, paper abstract] — MuLD uses "both the arxiv short
abstract and the one included in the document (where available) as the
reference summaries" (``long_abstract=False`` keeps the arXiv one only), each
stripped of surrounding blank space; ``metadata`` = JSON with ``id``, ``files``,
``tokens`` (under ``tokenizer``), ``has_long_abstract`` and
``reference_in_input``: for each reference whether it appears verbatim in the
main text (after collapsing blank space), whether that is at the start (in the
first ``START_WINDOW`` characters — a model could copy it), and how many of its
sentences of ≥ ``MIN_SENTENCE_CHARS`` characters appear verbatim.

Dropped, with the reason in the report: no main text, no or an empty arXiv
abstract, a file that cannot be read or is not UTF-8, a main text under the
length filter, a second file for the same id and part. A paper abstract that
is empty or unreadable is not used (noted in the report) and the record keeps
the arXiv abstract alone. Records are sorted by id; the same files give the
same bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longread.benchmarks.muld.builders.report import BuildReport, LengthFilter
from longread.benchmarks.muld.records import MuldRecord, write_records
from longread.errors import BadInputError
from longread.files import read_bytes

PARTS = ("main", "abstract", "abstract-long")
_NAME = re.compile(r"^(?P<id>.+?)\.(?P<part>main|abstract|abstract-long)\.txt(?:\.(?:gz|bz2|zst))?$")
START_WINDOW = 5_000
MIN_SENTENCE_CHARS = 40
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class TextOrProblem:
    text: str | None
    problem: str | None


@dataclass
class VlspReport(BuildReport):
    """The build report plus files that are not VLSP files and a summary of references found in inputs."""

    ignored_files: list[str] = field(default_factory=list)
    references_in_input: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            **super().as_json(),
            "ignored_files": self.ignored_files,
            "references_in_input": self.references_in_input,
        }


def _files(sources: Sequence[Path]) -> Iterator[Path]:
    for source in sources:
        source = Path(source)
        if source.is_dir():
            yield from sorted(p for p in source.rglob("*") if p.is_file() and not p.name.startswith("."))
        elif source.is_file():
            yield source
        else:
            raise BadInputError(source, "no such file or folder", "give VLSP folders or <id>.main.txt files")


def group_files(sources: Sequence[Path], report: VlspReport) -> dict[str, dict[str, Path]]:
    """``{id: {part: path}}`` for every VLSP-named file; others and repeats go to the report."""
    papers: dict[str, dict[str, Path]] = {}
    for path in _files(sources):
        match = _NAME.match(path.name)
        if match is None:
            report.ignored_files.append(str(path))
            continue
        parts = papers.setdefault(match.group("id"), {})
        part = match.group("part")
        if part in parts:
            report.drop(str(path), f"duplicate file: {part} of {match.group('id')} is already {parts[part]}")
            continue
        parts[part] = path
    return papers


def read_utf8(path: Path) -> TextOrProblem:
    """A VLSP file's text, or why it cannot be used (unreadable, not UTF-8)."""
    try:
        data = read_bytes(path)
    except BadInputError as exc:
        return TextOrProblem(None, f"unreadable: {exc.problem}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return TextOrProblem(
            None, f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start} (line {line})"
        )
    return TextOrProblem(text.replace("\r\n", "\n").replace("\r", "\n"), None)


def _flat(text: str) -> str:
    return " ".join(text.split())


def reference_in_input(reference: str, document: str) -> dict[str, Any]:
    """How much of ``reference`` a model could copy from ``document`` (see the module docstring)."""
    flat_reference, flat_document = _flat(reference), _flat(document)
    offset = flat_document.find(flat_reference)
    sentences = [s for s in _SENTENCE_END.split(flat_reference) if len(s) >= MIN_SENTENCE_CHARS]
    return {
        "verbatim": offset >= 0,
        "at_start": 0 <= offset < START_WINDOW,
        "sentences": len(sentences),
        "sentences_in_input": sum(sentence in flat_document for sentence in sentences),
    }


def _paper_record(
    paper: str, parts: dict[str, Path], report: BuildReport, length_filter: LengthFilter, long_abstract: bool
) -> MuldRecord | None:
    if "main" not in parts:
        report.drop(paper, "main text missing", files=sorted(str(p) for p in parts.values()))
        return None
    if "abstract" not in parts:
        report.drop(paper, "abstract missing", file=str(parts["main"]))
        return None
    main = read_utf8(parts["main"])
    if main.text is None or not main.text.strip():
        report.drop(paper, f"main text {main.problem or 'empty'}", file=str(parts["main"]))
        return None
    abstract = read_utf8(parts["abstract"])
    if abstract.text is None or not abstract.text.strip():
        report.drop(paper, f"abstract {abstract.problem or 'empty'}", file=str(parts["abstract"]))
        return None
    references = [abstract.text.strip()]
    notes: list[str] = []
    if long_abstract and "abstract-long" in parts:
        long = read_utf8(parts["abstract-long"])
        if long.text is not None and long.text.strip():
            references.append(long.text.strip())
        else:
            notes.append(f"paper abstract not used: {long.problem or 'empty'}")
    long_enough, tokens = length_filter.check(main.text)
    if not long_enough:
        report.drop(paper, length_filter.reason(tokens), tokens=tokens)
        return None
    copies = [reference_in_input(reference, main.text) for reference in references]
    metadata = {
        "id": paper,
        "files": {part: parts[part].name for part in PARTS if part in parts},
        "tokens": tokens,
        "tokenizer": length_filter.tokenizer,
        "has_long_abstract": len(references) == 2,
        "reference_in_input": copies,
    }
    report.keep(paper, tokens=tokens, references=len(references), reference_in_input=copies, notes=notes)
    return MuldRecord(main.text, tuple(references), json.dumps(metadata, ensure_ascii=False, sort_keys=True))


def build_vlsp(
    sources: Sequence[Path],
    out: str | Path,
    *,
    length_filter: LengthFilter | None = None,
    long_abstract: bool = True,
) -> VlspReport:
    """Write ``out`` (``.jsonl`` or ``.jsonl.bz2``) and ``<out>.report.json``; returns the report."""
    length_filter = length_filter or LengthFilter()
    report = VlspReport(
        "vlsp",
        [str(s) for s in sources],
        {**length_filter.describe(), "long_abstract": long_abstract, "start_window_chars": START_WINDOW},
    )
    papers = group_files(sources, report)
    records = [
        record
        for paper in sorted(papers)
        if (record := _paper_record(paper, papers[paper], report, length_filter, long_abstract)) is not None
    ]
    copies = [c for entry in report.kept for c in entry["reference_in_input"]]
    report.references_in_input = {
        "references": len(copies),
        "verbatim": sum(c["verbatim"] for c in copies),
        "verbatim_at_start": sum(c["at_start"] for c in copies),
        "with_a_sentence_in_input": sum(c["sentences_in_input"] > 0 for c in copies),
    }
    report.write(out)
    if not records:
        raise BadInputError(out, "no paper kept", f"see {report.summary()} and the report beside {out}")
    write_records(out, records)
    return report
