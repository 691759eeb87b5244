"""``longread build muld/character-archetype``: movie scripts + a labels CSV → MuLD records.

Sources: a folder of scripts (IMSDb's pages as saved from the site — HTML with
the script in a ``<pre>`` block — or plain text) and a labels CSV with the
columns ``script``, ``character``, ``label``.

Rules:
- ``script`` names a file in the folder: its exact name, else the one file
  whose name without extension is that value (``Alien`` → ``Alien.html``);
  none or several → the row is dropped with the reason;
- the script text: an HTML page's longest ``<pre>`` block (else its visible
  text), a plain file as it is (:mod:`.build_source_text`);
- labels are normalised: ``Hero`` or ``Protagonist`` → ``Hero``, ``Villain``
  or ``Antagonist`` → ``Villain`` (Skowron et al.'s names), case and spaces
  ignored; the original is kept in ``metadata["source_label"]``; any other
  label drops the row with its CSV line;
- the character must be mentioned: its full name as whole words,
  case-insensitive (scripts write ``RIPLEY`` in headings), else the first of
  its name parts of 3+ letters that is (``Ellen Ripley`` → ``Ripley``;
  ``metadata["matched_as"]`` says which); never mentioned → dropped;
- the length filter counts the script once (the name only adds to it);
- ``input`` = character + ``"\\n\\n"`` + script, ``output`` = ``[label]``;
  ``metadata``: ``id`` (``<script file>:<character>``), ``character``,
  ``script``, ``source_label``, ``matched_as``, ``mentions``;
- a (script, character) pair given twice keeps the first row.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from longread.benchmarks.muld.builders.report import BuildReport, LengthFilter
from longread.benchmarks.muld.builders.source_csv import CsvRow, read_csv_rows
from longread.benchmarks.muld.builders.source_text import read_source_text
from longread.benchmarks.muld.records import MuldRecord, write_records
from longread.errors import BadInputError

LABEL_COLUMNS = ("script", "character", "label")
LABELS = {"hero": "Hero", "protagonist": "Hero", "villain": "Villain", "antagonist": "Villain"}
_NOT_NAMES = frozenset({"the", "mr", "mrs", "miss", "dr", "sir", "lady", "lord", "captain", "old", "young"})


def normalise_label(label: str) -> str | None:
    """``Hero``/``Protagonist`` → ``Hero``, ``Villain``/``Antagonist`` → ``Villain``, else None."""
    return LABELS.get(" ".join(label.split()).lower())


def name_pattern(name: str) -> re.Pattern[str]:
    words = [re.escape(word) for word in name.split()]
    return re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", re.IGNORECASE)


def find_mentions(character: str, script: str) -> tuple[str, int] | None:
    """(the name as matched, how often) — the full name first, then its name parts; None if never."""
    candidates = [character] + [
        part
        for part in character.split()
        if len(part) >= 3 and part.isalpha() and part.lower() not in _NOT_NAMES
    ]
    for candidate in dict.fromkeys(candidates):
        mentions = len(name_pattern(candidate).findall(script))
        if mentions:
            return candidate, mentions
    return None


@dataclass(frozen=True)
class _Script:
    name: str
    text: str | None
    problem: str | None
    tokens: int = 0


class _Scripts:
    def __init__(self, folder: Path, length: LengthFilter) -> None:
        self.folder = folder
        self.length = length
        self.files = sorted(path for path in folder.iterdir() if path.is_file())
        self.cache: dict[str, _Script] = {}

    def resolve(self, value: str) -> Path | str:
        """The file a ``script`` value names, or why there is none."""
        value = value.strip()
        exact = [path for path in self.files if path.name == value]
        if exact:
            return exact[0]
        by_stem = [path for path in self.files if path.name.split(".")[0] == value]
        if len(by_stem) == 1:
            return by_stem[0]
        if by_stem:
            return f"script ambiguous: {', '.join(path.name for path in by_stem)} all match {value!r}"
        return f"script file missing: no {value!r} in {self.folder}"

    def get(self, path: Path) -> _Script:
        if path.name not in self.cache:
            self.cache[path.name] = self._load(path)
        return self.cache[path.name]

    def _load(self, path: Path) -> _Script:
        try:
            text, _kind = read_source_text(path, prefer_pre=True)
        except BadInputError as exc:
            return _Script(path.name, None, f"script unreadable: {exc}")
        ok, tokens = self.length.check(text)
        if not ok:
            return _Script(path.name, None, self.length.reason(tokens), tokens)
        return _Script(path.name, text, None, tokens)


def build_archetype(
    scripts: str | Path, labels: str | Path, out: str | Path, *, length_filter: LengthFilter | None = None
) -> BuildReport:
    """Write one record per labelled character (see the module rules) and the build report."""
    scripts, labels = Path(scripts), Path(labels)
    if not scripts.is_dir():
        raise BadInputError(scripts, "not a folder", "pass the folder of movie scripts (IMSDb pages)")
    length = length_filter or LengthFilter()
    report = BuildReport(
        "character-archetype",
        [str(scripts), str(labels)],
        {**length.describe(), "labels": dict(sorted(LABELS.items())), "length_counted_on": "script"},
    )
    folder = _Scripts(scripts, length)
    report.settings["records"] = write_records(out, _records(labels, folder, report))
    report.write(out)
    return report


def _records(labels: Path, folder: _Scripts, report: BuildReport) -> Iterator[MuldRecord]:
    seen: dict[tuple[str, str], int] = {}
    for row in read_csv_rows(labels, LABEL_COLUMNS):
        if not isinstance(row, CsvRow):
            report.drop(f"{labels.name}:{row.line}", f"bad row: {row.problem}", line=row.line)
            continue
        record = _record(row, folder, seen, report)
        if record is not None:
            yield record


def _record(
    row: CsvRow, folder: _Scripts, seen: dict[tuple[str, str], int], report: BuildReport
) -> MuldRecord | None:
    character = " ".join(row.values["character"].split())
    item = f"{row.values['script'].strip()}:{character}"
    label = normalise_label(row.values["label"])
    if label is None:
        report.drop(
            item,
            f"unknown label: {row.values['label']!r} (not Hero/Protagonist/Villain/Antagonist)",
            line=row.line,
        )
        return None
    if not character:
        report.drop(item, "no character name", line=row.line)
        return None
    path = folder.resolve(row.values["script"])
    if isinstance(path, str):
        report.drop(item, path, line=row.line)
        return None
    key = (path.name, character.lower())
    if key in seen:
        report.drop(item, f"duplicate: this character of this script is on line {seen[key]}", line=row.line)
        return None
    seen[key] = row.line
    script = folder.get(path)
    if script.text is None:
        report.drop(item, str(script.problem), line=row.line, tokens=script.tokens)
        return None
    mention = find_mentions(character, script.text)
    if mention is None:
        report.drop(item, f"character never mentioned in the script: {character!r}", line=row.line)
        return None
    matched_as, mentions = mention
    metadata = {
        "id": f"{path.name}:{character}",
        "character": character,
        "script": path.name,
        "source_label": row.values["label"].strip(),
        "matched_as": matched_as,
        "mentions": mentions,
    }
    report.keep(item, label=label, tokens=script.tokens, line=row.line)
    return MuldRecord(
        character + "\n\n" + script.text, (label,), json.dumps(metadata, ensure_ascii=False, sort_keys=True)
    )
