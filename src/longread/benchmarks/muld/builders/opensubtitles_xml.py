"""OPUS OpenSubtitles files: per-film subtitle XML and the sentence alignment (XCES ``cesAlign``).

Subtitle files (``raw/<lang>/<year>/<imdb id>/<subtitle id>.xml[.gz]``):
``<document id=…>`` holding ``<s id="1">`` sentences; in the *raw* release the
text sits directly in ``<s>`` between ``<time id="T1S" value="00:00:51,425"/>``
marks; in the *tokenised* release (``xml/``) it is split into ``<w>`` words.
Both are read: a sentence's text is all its text nodes with whitespace runs
(the file's line breaks) made one space; ``<meta>`` is never text.

Alignment (``<src>-<trg>.xml.gz``, languages in alphabetical order, so de-en
for English→German): ``<linkGrp fromDoc="de/…xml.gz" toDoc="en/…xml.gz">``
per film pair, ``<link xtargets="1 2;3" overlap="0.98"/>`` per aligned unit
(ids of the fromDoc side, ``;``, ids of the toDoc side; a side may be empty).
It is streamed (``iterparse``), so the multi-gigabyte files are not loaded.
"""

from __future__ import annotations

import bz2
import gzip
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

from longread.errors import BadInputError
from longread.files import read_bytes


@dataclass(frozen=True)
class Link:
    from_ids: tuple[str, ...]
    to_ids: tuple[str, ...]
    overlap: float | None


@dataclass(frozen=True)
class LinkGroup:
    from_doc: str
    to_doc: str
    links: tuple[Link, ...]


@dataclass(frozen=True)
class Subtitles:
    sentences: dict[str, str]
    tokenised: bool


def _where(exc: ET.ParseError) -> int | None:
    position = getattr(exc, "position", None)
    return position[0] if position else None


def read_subtitles(path: str | Path) -> Subtitles:
    """Sentence id → text of one subtitle file (raw or tokenised release)."""
    data = read_bytes(path)
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise BadInputError(
            path, f"broken XML ({exc})", "download the film's file again", line=_where(exc)
        ) from None
    sentences: dict[str, str] = {}
    tokenised = False
    for sentence in root.iter("s"):
        sentence_id = sentence.get("id")
        if sentence_id is None:
            continue
        tokenised = tokenised or sentence.find(".//w") is not None
        sentences[sentence_id] = " ".join("".join(sentence.itertext()).split())
    return Subtitles(sentences, tokenised)


def _open(path: Path) -> IO[bytes]:
    if not path.is_file():
        raise BadInputError(path, "file not found", "give the OPUS alignment file (e.g. de-en.xml.gz)")
    if path.name.endswith(".gz"):
        return cast(IO[bytes], gzip.open(path, "rb"))
    if path.name.endswith(".bz2"):
        return cast(IO[bytes], bz2.open(path, "rb"))
    return path.open("rb")


def _ids(side: str) -> tuple[str, ...]:
    return tuple(side.split())


def parse_link(element: ET.Element) -> Link | str:
    """One ``<link>`` → a :class:`Link`, or what is wrong with it."""
    targets = element.get("xtargets")
    if targets is None or targets.count(";") != 1:
        return f"link {element.get('id', '?')}: xtargets {targets!r} is not 'ids;ids'"
    left, right = targets.split(";")
    overlap_text = element.get("overlap")
    try:
        overlap = float(overlap_text) if overlap_text is not None else None
    except ValueError:
        return f"link {element.get('id', '?')}: overlap {overlap_text!r} is not a number"
    return Link(_ids(left), _ids(right), overlap)


def iter_link_groups(path: str | Path) -> Iterator[LinkGroup | tuple[str, str]]:
    """Each ``linkGrp`` in file order; a group with a bad link is ``(group name, problem)`` instead."""
    path = Path(path)
    with _open(path) as handle:
        try:
            for _event, element in ET.iterparse(handle, events=("end",)):
                if element.tag != "linkGrp":
                    continue
                from_doc, to_doc = element.get("fromDoc", ""), element.get("toDoc", "")
                name = f"{from_doc} → {to_doc}"
                links: list[Link] = []
                problem = None if from_doc and to_doc else "linkGrp without fromDoc/toDoc"
                for child in element.iter("link"):
                    parsed = parse_link(child)
                    if isinstance(parsed, str):
                        problem = problem or parsed
                    else:
                        links.append(parsed)
                element.clear()
                yield (name, problem) if problem else LinkGroup(from_doc, to_doc, tuple(links))
        except ET.ParseError as exc:
            raise BadInputError(
                path, f"broken XML ({exc})", "the alignment file is corrupt or cut short", line=_where(exc)
            ) from None
        except (OSError, EOFError) as exc:
            raise BadInputError(path, f"cannot decompress ({exc})", "download it again") from None
