"""``longread build muld/narrativeqa``: the deepmind/narrativeqa repository → MuLD records.

Source (``--source DIR``): a checkout of github.com/deepmind/narrativeqa after
its ``download_stories.sh`` ran, i.e. ``DIR/documents.csv``, ``DIR/qaps.csv``
and ``DIR/tmp/<document_id>.content`` (the story as downloaded: Gutenberg text
or a script's web page). The stories folder may be given apart (``stories``).

Rules:
- one record per question of ``qaps.csv``, in file order: ``input`` =
  question + ``"\\n\\n"`` + story, ``output`` = ``[answer1, answer2]`` (the two
  references; an empty one is left out, both empty drops the question);
- the story is the text between ``story_start`` and ``story_end``
  (:mod:`.build_narrativeqa_story`); web pages are reduced to their visible
  text first (:mod:`.build_source_text`); a marker not found is listed in the
  report (``extent_guessed``) and that end of the file is kept;
- the length filter counts the story's tokens once per document (the question
  only adds to them), so every input has at least ``min_tokens`` tokens;
- questions are split by their ``set`` (train/valid/test): one file per split,
  named by :func:`split_path` from ``out`` (``narrativeqa.jsonl.bz2`` →
  ``narrativeqa_train.jsonl.bz2`` …), one report beside ``out``;
- dropped, with the reason, per question: its document unknown, its set not
  the document's, no answer, the story file missing or unreadable, too short;
  a row of the wrong width is dropped with its line.
- ``metadata``: ``id`` (``<document_id>:<n>``, n = the question's index among
  its document's questions in ``qaps.csv``), ``document_id``, ``set``,
  ``kind``, ``question``, ``story_chars`` ([start, end] of the story in the
  decoded file text), ``title`` (the Wikipedia title) and, where the story URL
  is a Gutenberg book's, ``gutenberg_id`` (``…/ebooks/105.txt.utf-8`` → ``105``,
  the id ``longread probe memory`` gives the book);
- ``exclude`` ((book id, why), from ``--exclude-remembered``): the questions on
  those Gutenberg books are left out, listed in the report as excluded (not
  dropped); a story that is not a Gutenberg book (a film script) has no id a
  probe could have given and is kept, counted as not probed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from longread.benchmarks.muld.builders.narrativeqa_story import find_story
from longread.benchmarks.muld.builders.report import BuildReport, LengthFilter
from longread.benchmarks.muld.builders.source_csv import CsvRow, read_csv_rows
from longread.benchmarks.muld.builders.source_text import read_source_text
from longread.benchmarks.muld.records import MuldRecord, write_records
from longread.errors import BadInputError

DOCUMENT_COLUMNS = (
    "document_id",
    "set",
    "kind",
    "story_url",
    "story_file_size",
    "wiki_url",
    "wiki_title",
    "story_word_count",
    "story_start",
    "story_end",
)
QAPS_COLUMNS = ("document_id", "set", "question", "answer1", "answer2")
GUTENBERG_URL = re.compile(r"gutenberg\.org/(?:ebooks|files)/(\d+)")


def gutenberg_id(document: CsvRow) -> str | None:
    """The Gutenberg number of a document whose story is a Gutenberg book (None: a script or unknown)."""
    if document.values["kind"].strip() != "gutenberg":
        return None
    found = GUTENBERG_URL.search(document.values["story_url"])
    return found.group(1) if found else None


SPLITS = ("train", "valid", "test")
_DATA_SUFFIXES = (".jsonl.bz2", ".json.bz2", ".jsonl", ".json", ".bz2")


def split_path(out: str | Path, split: str) -> Path:
    """``dir/name.jsonl.bz2`` → ``dir/name_<split>.jsonl.bz2`` (the split goes before the data suffix)."""
    out = Path(out)
    for suffix in _DATA_SUFFIXES:
        if out.name.endswith(suffix):
            return out.with_name(out.name[: -len(suffix)] + f"_{split}" + suffix)
    return out.with_name(out.name + f"_{split}")


@dataclass(frozen=True)
class _Story:
    text: str | None
    problem: str | None
    tokens: int = 0
    start: int = 0
    end: int = 0


class _Stories:
    """Reads each story once per split pass (``qaps.csv`` lists a document's questions together)."""

    def __init__(
        self,
        folder: Path,
        documents: dict[str, CsvRow],
        length: LengthFilter,
        exclude: dict[str, str] | None = None,
    ) -> None:
        self.folder = folder
        self.documents = documents
        self.length = length
        self.last: tuple[str, _Story] | None = None
        self.guessed: dict[str, str] = {}
        self.exclude = exclude or {}
        self._excluded: dict[str, str] = {}
        self._not_gutenberg: set[str] = set()

    def excluded(self, document: CsvRow) -> str | None:
        """Why the document's questions are left out (its Gutenberg book is to be excluded), or None."""
        number = gutenberg_id(document)
        if number is None:
            if self.exclude:
                self._not_gutenberg.add(document.values["document_id"].strip())
            return None
        why = self.exclude.get(number)
        if why is not None:
            self._excluded[number] = why
        return why

    def excluded_books(self) -> dict[str, str]:
        """Gutenberg id → why, of every book whose questions were left out."""
        return dict(sorted(self._excluded.items()))

    def not_gutenberg(self) -> list[str]:
        """Documents kept though no probe could have judged them (not Gutenberg books)."""
        return sorted(self._not_gutenberg)

    def get(self, document_id: str) -> _Story:
        if self.last is not None and self.last[0] == document_id:
            return self.last[1]
        story = self._load(document_id)
        self.last = (document_id, story)
        return story

    def _load(self, document_id: str) -> _Story:
        path = self.folder / f"{document_id}.content"
        if not path.is_file():
            return _Story(None, f"story file missing: {path} (run download_stories.sh)")
        try:
            text, _kind = read_source_text(path)
        except BadInputError as exc:
            return _Story(None, f"story file unreadable: {exc}")
        row = self.documents[document_id].values
        extent = find_story(text, row["story_start"], row["story_end"])
        if not (extent.start_found and extent.end_found):
            missing = [
                name
                for name, found in (("story_start", extent.start_found), ("story_end", extent.end_found))
                if not found
            ]
            self.guessed[document_id] = f"{' and '.join(missing)} not found; that end of the file kept"
        raw = extent.cut(text)
        story = raw.strip()
        if not story:
            return _Story(None, "story empty between its markers")
        start = extent.start + len(raw) - len(raw.lstrip())
        ok, tokens = self.length.check(story)
        if not ok:
            return _Story(None, self.length.reason(tokens), tokens)
        return _Story(story, None, tokens, start, start + len(story))


def read_documents(path: Path, report: BuildReport) -> dict[str, CsvRow]:
    documents: dict[str, CsvRow] = {}
    for row in read_csv_rows(path, DOCUMENT_COLUMNS):
        if not isinstance(row, CsvRow):
            report.drop(f"{path.name}:{row.line}", f"bad row: {row.problem}", file=str(path), line=row.line)
            continue
        document_id = row.values["document_id"].strip()
        if document_id in documents:
            report.drop(
                f"{path.name}:{row.line}",
                f"duplicate document: {document_id} (first on line {documents[document_id].line})",
                file=str(path),
                line=row.line,
            )
            continue
        documents[document_id] = row
    return documents


def build_narrativeqa(
    source: str | Path,
    out: str | Path,
    *,
    stories: str | Path | None = None,
    length_filter: LengthFilter | None = None,
    splits: Sequence[str] = SPLITS,
    exclude: Sequence[tuple[str, str]] = (),
) -> BuildReport:
    """Write one MuLD file per split (see the module rules) and the build report; returns the report."""
    source = Path(source)
    if not source.is_dir():
        raise BadInputError(
            source, "not a folder", "pass the narrativeqa checkout (documents.csv, qaps.csv, tmp/)"
        )
    unknown = [split for split in splits if split not in SPLITS]
    if unknown:
        raise BadInputError(
            None, f"unknown split(s) {', '.join(unknown)}", f"choose from {', '.join(SPLITS)}"
        )
    length = length_filter or LengthFilter()
    story_folder = Path(stories) if stories is not None else source / "tmp"
    report = BuildReport(
        "narrativeqa",
        [str(source), str(story_folder)],
        {**length.describe(), "splits": list(splits), "length_counted_on": "story (once per document)"},
    )
    documents = read_documents(source / "documents.csv", report)
    qaps = source / "qaps.csv"
    loader = _Stories(story_folder, documents, length, dict(exclude))
    written: dict[str, int] = {}
    for split in splits:
        path = split_path(out, split)
        written[str(path)] = write_records(
            path, _split_records(qaps, split, split == splits[0], documents, loader, report)
        )
    report.settings["files"] = written
    if exclude:
        report.settings["excluded_books"] = loader.excluded_books()
        report.settings["not_gutenberg_kept"] = loader.not_gutenberg()
    report.settings["extent_guessed"] = dict(sorted(loader.guessed.items()))
    report.write(out)
    return report


def _split_records(
    qaps: Path,
    split: str,
    first_pass: bool,
    documents: dict[str, CsvRow],
    loader: _Stories,
    report: BuildReport,
) -> Iterator[MuldRecord]:
    counts: dict[str, int] = {}
    for row in read_csv_rows(qaps, QAPS_COLUMNS):
        if not isinstance(row, CsvRow):
            if first_pass:  # reported once, not once per split
                report.drop(
                    f"{qaps.name}:{row.line}", f"bad row: {row.problem}", file=str(qaps), line=row.line
                )
            continue
        values = row.values
        document_id = values["document_id"].strip()
        number = counts.get(document_id, 0)
        counts[document_id] = number + 1
        if values["set"].strip() != split:
            if first_pass and values["set"].strip() not in SPLITS:
                report.drop(f"{document_id}:{number}", f"unknown set: {values['set']!r}", line=row.line)
            continue
        record = _question_record(values, f"{document_id}:{number}", row.line, documents, loader, report)
        if record is not None:
            yield record


def _question_record(
    values: dict[str, str],
    item: str,
    line: int,
    documents: dict[str, CsvRow],
    loader: _Stories,
    report: BuildReport,
) -> MuldRecord | None:
    document_id = values["document_id"].strip()
    document = documents.get(document_id)
    if document is None:
        report.drop(item, f"unknown document: {document_id} is not in documents.csv", line=line)
        return None
    if document.values["set"].strip() != values["set"].strip():
        report.drop(
            item,
            f"set mismatch: qaps.csv says {values['set']!r}, documents.csv {document.values['set']!r}",
            line=line,
        )
        return None
    question = values["question"].strip()
    answers = tuple(answer.strip() for answer in (values["answer1"], values["answer2"]) if answer.strip())
    if not question or not answers:
        report.drop(item, "no question or no answer", line=line)
        return None
    why = loader.excluded(document)
    if why is not None:
        report.exclude(item, why, gutenberg_id=gutenberg_id(document), line=line)
        return None
    story = loader.get(document_id)
    if story.text is None:
        report.drop(item, str(story.problem), line=line, tokens=story.tokens)
        return None
    metadata = {
        "id": item,
        "document_id": document_id,
        "set": values["set"].strip(),
        "kind": document.values["kind"].strip(),
        "question": question,
        "story_chars": [story.start, story.end],
        "title": document.values["wiki_title"].strip(),
    }
    number = gutenberg_id(document)
    if number is not None:
        metadata["gutenberg_id"] = number
    report.keep(item, split=values["set"].strip(), tokens=story.tokens, line=line)
    return MuldRecord(
        question + "\n\n" + story.text, answers, json.dumps(metadata, ensure_ascii=False, sort_keys=True)
    )
