"""A MuLD record as a task reads it: the question (or character) split from the document, and an id.

Where the input holds a question and a document (NarrativeQA, HotpotQA; the
character name in character archetype), the split is parsed and recorded so
truncation cuts the document only. Rules, first that applies:

1. ``metadata`` (a JSON object, as longread's builders write) names the
   ``question`` (or ``character``) and the input starts with it → ``metadata``.
2. NarrativeQA as published: the question, then the story, which starts with a
   byte-order mark (``\\ufeff``, or its UTF-8 bytes read as Latin-1, ``ï»¿``) or
   with ``<html>`` (movie scripts) → ``bom`` / ``html``.
3. The first line ends the question (the character name): ``first-line``.
4. Question tasks only: the first ``?`` followed by white space → ``question-mark``.

A question task whose input none of these splits is a problem for that line
(named by file and line), never a guess.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longread.benchmarks.muld.names import QUESTION_TASKS
from longread.benchmarks.muld.records import MuldRecord, RecordProblem

_BOMS = ("\ufeff", "ï»¿")
_QUESTION_END = re.compile(r"\?\s")


@dataclass(frozen=True)
class MuldInstance:
    id: str
    task: str
    line: int
    document: str
    references: tuple[str, ...]
    question: str | None = None
    """The question (QA) or the character name (archetype); None for document-only tasks."""
    split_rule: str = "none"
    metadata: dict[str, Any] = field(default_factory=dict)
    source: str = ""

    @property
    def group(self) -> str:
        """What stratified sampling spreads over: the document (many questions share one)."""
        return str(self.metadata.get("document_id") or self.metadata.get("film") or _digest(self.document))


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def split_input(task: str, record: MuldRecord) -> tuple[str | None, str, str]:
    """(question or None, document, rule) — raises ValueError when a question task's input cannot be split."""
    text = record.input
    if task not in QUESTION_TASKS:
        return None, text, "none"
    meta = record.metadata_json()
    named = meta.get("character" if task == "character-archetype" else "question")
    if isinstance(named, str) and named and text.startswith(named):
        return named.strip(), text[len(named) :].lstrip("\n ").lstrip("\ufeff"), "metadata"
    if task == "narrativeqa":
        for bom in _BOMS:
            at = text.find(bom)
            if at > 0:
                return text[:at].strip(), text[at + len(bom) :], "bom"
        at = text.find("<html>")
        if at > 0:
            return text[:at].strip(), text[at:], "html"
    newline = text.find("\n")
    if 0 < newline < 500 and text[newline + 1 :].strip():
        head = text[:newline].strip()
        if task == "character-archetype" or head.endswith("?"):
            return head, text[newline + 1 :].lstrip("\n"), "first-line"
    if task != "character-archetype":
        match = _QUESTION_END.search(text, 0, 1000)
        if match is not None:
            return text[: match.start() + 1].strip(), text[match.end() :], "question-mark"
    raise ValueError(
        "cannot tell the question from the document (no metadata 'question', no byte-order mark, "
        "<html> or question mark near the start)"
    )


def to_instance(task: str, record: MuldRecord, path: Path, line: int) -> MuldInstance | RecordProblem:
    try:
        question, document, rule = split_input(task, record)
    except ValueError as exc:
        return RecordProblem(str(path), line, str(exc), "write the question first, then a blank line")
    if not document.strip():
        return RecordProblem(str(path), line, "the document after the question is empty", "check the input")
    meta = record.metadata_json()
    if not meta and record.metadata:
        meta = {"text": record.metadata}
    ident = str(meta.get("id") or f"{_stem(path)}:{line}")
    return MuldInstance(
        id=ident,
        task=task,
        line=line,
        document=document,
        references=record.output,
        question=question,
        split_rule=rule,
        metadata=meta,
        source=str(path),
    )


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".bz2", ".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return name
