"""``longread build muld/opensubtitles``: OPUS OpenSubtitles EN→DE, one film → one record.

Sources: the OPUS alignment file of the pair (``de-en.xml.gz``, or ``en-de``;
either direction is read, the sides are swapped by the languages named in
``fromDoc``/``toDoc``) and the folder the subtitle paths in it are relative to
(the unpacked ``raw/`` or ``xml/`` release: ``en/<year>/<id>/<file>.xml[.gz]``,
``de/…``). Formats: :mod:`.build_opensubtitles_xml`.

Rules:
- one film = one ``(year, imdb id)``; when the alignment holds several
  subtitle pairs of a film (OPUS aligns every version), the pair with the most
  links that have text on both sides is used (ties: the first); the others are
  listed as dropped;
- each link with sentences on both sides is one line: its English sentences
  joined by a space on the input side, its German ones on the output side;
  ``input`` = the English lines joined by ``"\\n"``, ``output`` =
  ``[the German lines joined by "\\n"]`` — line *i* of the output translates
  line *i* of the input;
- 1:0 and 0:1 links (a sentence with no counterpart) are left out of both
  sides and counted (``unaligned_source`` / ``unaligned_target`` in the
  metadata and the report), as a translation of a line the other side lacks
  cannot be scored; so are links whose text is empty on one side
  (``empty_links``) and, with ``min_overlap``, links under it (``low_overlap``);
- a subtitle file missing or broken, or a link naming a sentence the file does
  not have, drops the film with the reason; the length filter counts the
  English input;
- ``metadata``: ``id`` (``<year>/<imdb id>``), ``film_id``, ``year``,
  ``source_file``, ``target_file``, ``lines``, ``links_by_type``
  (``"2:1"``: count …), the unaligned counts, ``tokenised`` and ``overlap``
  (``min``/``mean``/``max`` over the lines' links with an overlap, and how many
  had none).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longread.benchmarks.muld.builders.opensubtitles_xml import (
    Link,
    LinkGroup,
    Subtitles,
    iter_link_groups,
    read_subtitles,
)
from longread.benchmarks.muld.builders.report import BuildReport, LengthFilter
from longread.benchmarks.muld.records import MuldRecord, write_records
from longread.errors import BadInputError


@dataclass(frozen=True)
class FilmPair:
    """A link group put in source → target direction."""

    film: str
    year: str
    source_file: str
    target_file: str
    links: tuple[Link, ...]

    def both_sided(self) -> int:
        return sum(1 for link in self.links if link.from_ids and link.to_ids)


def orient(group: LinkGroup, source_lang: str, target_lang: str) -> FilmPair | str:
    """The group as source → target (swapped when fromDoc is the target language), or why it cannot be."""
    from_lang, to_lang = group.from_doc.split("/")[0], group.to_doc.split("/")[0]
    if (from_lang, to_lang) == (source_lang, target_lang):
        source_file, target_file, links = group.from_doc, group.to_doc, group.links
    elif (from_lang, to_lang) == (target_lang, source_lang):
        source_file, target_file = group.to_doc, group.from_doc
        links = tuple(Link(link.to_ids, link.from_ids, link.overlap) for link in group.links)
    else:
        return f"languages {from_lang}→{to_lang}, not {source_lang}/{target_lang}"
    parts = source_file.split("/")
    if len(parts) < 4:
        return f"path {source_file!r} is not <lang>/<year>/<id>/<file>"
    return FilmPair(f"{parts[1]}/{parts[2]}", parts[1], source_file, target_file, links)


@dataclass
class _Counts:
    unaligned_source: int = 0
    unaligned_target: int = 0
    empty_links: int = 0
    low_overlap: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    overlaps: list[float] = field(default_factory=list)
    no_overlap: int = 0


def resolve(root: Path, document: str) -> Path | None:
    """The subtitle file a ``fromDoc``/``toDoc`` path names under ``root`` (with or without ``.gz``)."""
    for candidate in (root / document, root / document.removesuffix(".gz"), root / (document + ".gz")):
        if candidate.is_file():
            return candidate
    return None


def build_opensubtitles(
    alignment: str | Path,
    subtitles: str | Path,
    out: str | Path,
    *,
    source_lang: str = "en",
    target_lang: str = "de",
    min_overlap: float | None = None,
    length_filter: LengthFilter | None = None,
) -> BuildReport:
    """Write one record per film (see the module rules) and the build report."""
    root = Path(subtitles)
    if not root.is_dir():
        raise BadInputError(root, "not a folder", "pass the unpacked OPUS raw/ folder (en/…, de/…)")
    length = length_filter or LengthFilter()
    report = BuildReport(
        "opensubtitles",
        [str(alignment), str(root)],
        {
            **length.describe(),
            "languages": f"{source_lang}→{target_lang}",
            "min_overlap": min_overlap,
            "unaligned_links": "left out of both sides and counted",
        },
    )
    films = _films(alignment, source_lang, target_lang, report)
    records = (_film_record(pair, root, min_overlap, length, report) for pair in films)
    report.settings["records"] = write_records(out, (record for record in records if record is not None))
    report.write(out)
    return report


def _films(
    alignment: str | Path, source_lang: str, target_lang: str, report: BuildReport
) -> Iterator[FilmPair]:
    """One pair per film: the best of each run of consecutive groups of the same film (OPUS sorts by path)."""
    done: set[str] = set()
    run: list[FilmPair] = []

    def best_of_run() -> Iterator[FilmPair]:
        if not run:
            return
        best = max(run, key=lambda pair: (pair.both_sided(), -run.index(pair)))
        for other in run:
            if other is not best:
                used = f"{best.source_file} → {best.target_file}"
                report.drop(
                    f"{other.source_file} → {other.target_file}",
                    f"another subtitle pair of film {best.film}: {used} used",
                )
        done.add(best.film)
        yield best
        run.clear()

    for group in iter_link_groups(alignment):
        if isinstance(group, tuple):
            report.drop(group[0], f"bad alignment: {group[1]}")
            continue
        pair = orient(group, source_lang, target_lang)
        if isinstance(pair, str):
            report.drop(f"{group.from_doc} → {group.to_doc}", f"bad alignment: {pair}")
            continue
        if run and run[0].film != pair.film:
            yield from best_of_run()
        if pair.film in done:
            report.drop(
                f"{pair.source_file} → {pair.target_file}",
                f"film {pair.film} already built (not consecutive)",
            )
            continue
        run.append(pair)
    yield from best_of_run()


def _film_record(
    pair: FilmPair, root: Path, min_overlap: float | None, length: LengthFilter, report: BuildReport
) -> MuldRecord | None:
    texts: list[Subtitles] = []
    for document in (pair.source_file, pair.target_file):
        path = resolve(root, document)
        if path is None:
            report.drop(pair.film, f"subtitle file missing: {root / document}")
            return None
        try:
            texts.append(read_subtitles(path))
        except BadInputError as exc:
            report.drop(pair.film, f"subtitle file unreadable: {exc}")
            return None
    source, target = texts
    counts = _Counts()
    source_lines: list[str] = []
    target_lines: list[str] = []
    for link in pair.links:
        kind = f"{len(link.from_ids)}:{len(link.to_ids)}"
        counts.by_type[kind] = counts.by_type.get(kind, 0) + 1
        if not link.to_ids:
            counts.unaligned_source += 1
            continue
        if not link.from_ids:
            counts.unaligned_target += 1
            continue
        absent = [i for i in link.from_ids if i not in source.sentences] + [
            i for i in link.to_ids if i not in target.sentences
        ]
        if absent:
            report.drop(
                pair.film, f"alignment names sentence(s) {', '.join(absent)} absent from the subtitle files"
            )
            return None
        if min_overlap is not None and link.overlap is not None and link.overlap < min_overlap:
            counts.low_overlap += 1
            continue
        english = " ".join(source.sentences[i] for i in link.from_ids).strip()
        german = " ".join(target.sentences[i] for i in link.to_ids).strip()
        if not english or not german:
            counts.empty_links += 1
            continue
        source_lines.append(english)
        target_lines.append(german)
        if link.overlap is None:
            counts.no_overlap += 1
        else:
            counts.overlaps.append(link.overlap)
    if not source_lines:
        report.drop(pair.film, "no aligned line with text on both sides")
        return None
    document = "\n".join(source_lines)
    ok, tokens = length.check(document)
    if not ok:
        report.drop(pair.film, length.reason(tokens), lines=len(source_lines))
        return None
    metadata = _metadata(pair, counts, len(source_lines), source.tokenised or target.tokenised)
    report.keep(
        pair.film,
        tokens=tokens,
        lines=len(source_lines),
        unaligned_source=counts.unaligned_source,
        unaligned_target=counts.unaligned_target,
    )
    return MuldRecord(
        document, ("\n".join(target_lines),), json.dumps(metadata, ensure_ascii=False, sort_keys=True)
    )


def _metadata(pair: FilmPair, counts: _Counts, lines: int, tokenised: bool) -> dict[str, Any]:
    overlaps = counts.overlaps
    summary: dict[str, Any] = {"links_without_overlap": counts.no_overlap}
    if overlaps:
        summary |= {
            "min": round(min(overlaps), 4),
            "mean": round(sum(overlaps) / len(overlaps), 4),
            "max": round(max(overlaps), 4),
        }
    return {
        "id": pair.film,
        "film_id": pair.film.split("/")[1],
        "year": pair.year,
        "source_file": pair.source_file,
        "target_file": pair.target_file,
        "lines": lines,
        "links_by_type": dict(sorted(counts.by_type.items())),
        "unaligned_source": counts.unaligned_source,
        "unaligned_target": counts.unaligned_target,
        "empty_links": counts.empty_links,
        "low_overlap": counts.low_overlap,
        "tokenised": tokenised,
        "overlap": summary,
    }
