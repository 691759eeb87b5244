"""A book's narrative cut into NarrativeXL scenes: sentence-aligned chunks of at most ``chars`` characters.

The rules are the authors' (``utils/BookProcessing.py`` and ``Dataloaders.py`` in R-seny/NarrativeXL):

* The narrative is split into sentences (``syntok``, paragraph by paragraph, where the authors split
  naively at every "."); a sentence longer than ``chars`` is cut at its last space before the limit,
  as their ``adjust_length`` does (at a comma when there is no space, else hard), and counted.
* A chapter heading is glued to the first sentence after it, so no scene ends with a heading.
* Sentences are packed greedily (``rechunk_book``): a sentence joins the current scene while the
  scene stays within ``chars``; otherwise it starts the next scene.
* The text given to the summariser (``overlapped``) is the last ``overlap`` characters of the
  previous scene + the scene + the first ``overlap`` characters of the next one
  (``create_chunk_summaries``): it never reaches past the neighbouring scenes.

The default is the authors' code, 3,000 characters (~150 scenes a novel); the paper's text says
~20,000 (``SceneSettings.paper()``).

A scene is an exact slice of the *narrative*: the book rendered (``Book.render``) from the chapters
that are story, with non-story blocks taken out. Scenes join back to the narrative exactly, each
starts at a sentence start and ends at a sentence end followed by the whitespace before the next
sentence. What the Book reader already removed (licence, front matter before the first chapter,
"THE END" and back matter in the last fifth of the last chapter) is in ``Book.notes`` and copied to
``SceneCut.reader_notes``; what this module leaves out on top is listed in ``SceneCut.left_out``:

* chapters whose heading is only a front/back matter word (notes, glossary, appendix, index,
  footnotes, transcriber's notes, contents, preface, introduction …, without a chapter number:
  "I Introduction" in *The Time Machine* is story);
* back matter that starts with a heading line of its own ("FOOTNOTES", "NOTE TO CHAPTER I.",
  "NOTES to Chapter XV.", "NOTE", "GLOSSARY" …) anywhere in the last chapter (Ivanhoe, The Prince
  and the Pauper and Notre-Dame de Paris carry tens of thousands of characters of notes there);
* bracketed footnote and illustration paragraphs ("[Footnote 1: …]", "[Illustration: …]").
"""

from __future__ import annotations

import bisect
import re
from dataclasses import replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from longread.benchmarks.narrativexl.schema import Scene
from longread.documents.book import Book, Chapter
from longread.errors import BadInputError
from longread.models.suffixlm.segments import split_sentences

DEFAULT_SCENE_CHARS = 3000
"""The authors' code (``Dataloaders.DataLoader(chunk_length=3000)``)."""
PAPER_SCENE_CHARS = 20000
"""The paper's text ("~20,000 characters")."""
DEFAULT_OVERLAP = 300
"""``settings.OCHUNK_OVERLAP_SYMBOLS``."""
DEFAULT_MIN_SCENES = 10

LeftOutKind = Literal["matter chapter", "back matter", "footnote", "illustration"]

_MATTER_WORDS = (
    r"(?:(?:the\s+)?(?:author[’']?s\s+|translator[’']?s\s+|editor[’']?s\s+)?"
    r"(?:preface|introduction|foreword|prefatory\s+note|contents|table\s+of\s+contents|"
    r"(?:end|foot)?notes?|glossary|appendix|appendices|index|bibliography|dedication|"
    r"(?:list\s+of\s+)?illustrations|errata|advertisements?|"
    r"(?:original\s+)?transcriber[’']?s\s+notes?|note\s+on\s+the\s+text|footnotes\s+and\s+.*notes))"
)
# A heading made of a matter word alone (an appendix may carry a letter or number: "APPENDIX B").
_MATTER_HEADING = re.compile(
    rf"^[\s*_.:\[\]-]*{_MATTER_WORDS}(?:\s+(?:[A-Z]|[IVXLC]+|\d+))?[\s*_.:\[\]-]*$", re.IGNORECASE
)
# A paragraph that opens back matter inside the last chapter: its own line, in capitals
# ("FOOTNOTES", "NOTE TO CHAPTER I.", "NOTES to Chapter XV.", "NOTE 1, Chapter IV.", "GLOSSARY").
_BACK_MATTER_LINE = re.compile(
    r"(?:^|\n[ \t]*\n)[ \t]*(?P<line>[* \t]*(?:FOOTNOTES?|END ?NOTES?|NOTES?|GLOSSARY|APPENDIX|INDEX|"
    r"(?:ORIGINAL )?TRANSCRIBER[’']S NOTES?)\b[^\n]{0,70})[ \t]*\n",
)
_BACK_MATTER_REST = re.compile(
    r"^[*\s]*(?:FOOTNOTES?|END ?NOTES?|GLOSSARY|APPENDIX|INDEX|(?:ORIGINAL )?TRANSCRIBER[’']S NOTES?)"
    r"[\s*.:]*(?:AND\b.*)?$|^NOTES?(?:[\s.:]*$|\s+(?:TO|ON|ADDED|\d+|[IVXLC]+\b))",
)
_BRACKETED_BLOCK = re.compile(
    r"(?:^|(?<=\n))[ \t]*\[(?P<kind>Footnote|Illustration)\b[^\]]*\][ \t]*(?:\n|$)", re.IGNORECASE
)


class SceneSettings(BaseModel):
    """How a book is cut into scenes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    chars: int = Field(default=DEFAULT_SCENE_CHARS, ge=100, description="the longest scene, in characters")
    overlap: int = Field(
        default=DEFAULT_OVERLAP,
        ge=0,
        description="characters of each neighbouring scene given to the summariser",
    )
    min_scenes: int = Field(
        default=DEFAULT_MIN_SCENES, ge=1, description="fewer scenes than this: the book is refused"
    )

    @classmethod
    def paper(cls) -> SceneSettings:
        """The paper's scene size (~20,000 characters, 300 of overlap) instead of the code's 3,000."""
        return cls(chars=PAPER_SCENE_CHARS)


class LeftOut(BaseModel):
    """A piece of the book that is not narrative and is in no scene."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: LeftOutKind
    chapter_index: int = Field(description="the Book chapter it was in (or was)")
    chars: int
    opening: str = Field(description="its first words, to find it again")


class SceneCut(BaseModel):
    """A book's scenes and everything that did not become one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    book_id: str
    settings: SceneSettings
    scenes: tuple[Scene, ...]
    narrative: str = Field(description="the text the scenes cut: they join back to it exactly")
    left_out: tuple[LeftOut, ...] = ()
    reader_notes: tuple[str, ...] = Field(default=(), description="what the Book reader had already removed")
    split_sentences: int = Field(default=0, description="sentences longer than `chars`, cut at a space")
    mid_sentence_ends: tuple[int, ...] = Field(
        default=(), description="scenes that end inside such a sentence (all others end at a sentence end)"
    )


class TooLittleNarrativeError(BadInputError):
    """A book whose narrative makes fewer scenes than the questions need."""


def is_matter_heading(heading: str) -> bool:
    """True for a chapter heading that names front or back matter only ("NOTES", "Preface", "APPENDIX B")."""
    return bool(heading.strip()) and _MATTER_HEADING.match(" ".join(heading.split())) is not None


def _opening(text: str) -> str:
    return " ".join(text.split())[:80]


def _back_matter_start(text: str) -> int | None:
    """Where back matter with a heading line of its own starts in a (last) chapter's body."""
    for match in _BACK_MATTER_LINE.finditer(text):
        line = " ".join(match.group("line").split())
        if _BACK_MATTER_REST.match(line):
            return match.start("line")
    return None


def _drop_bracketed(text: str, chapter_index: int, left_out: list[LeftOut]) -> str:
    """Take "[Footnote …]" and "[Illustration …]" paragraphs out of a chapter body."""
    kept: list[str] = []
    position = 0
    for match in _BRACKETED_BLOCK.finditer(text):
        kind: LeftOutKind = "footnote" if match.group("kind").lower() == "footnote" else "illustration"
        left_out.append(
            LeftOut(
                kind=kind,
                chapter_index=chapter_index,
                chars=len(match.group()),
                opening=_opening(match.group()),
            )
        )
        kept.append(text[position : match.start()])
        position = match.end()
    if not kept:
        return text
    kept.append(text[position:])
    return "".join(kept)


def narrative_chapters(book: Book) -> tuple[list[tuple[int, Chapter]], list[LeftOut]]:
    """The story chapters (with their Book index), their non-story blocks taken out, and what was left out."""
    left_out: list[LeftOut] = []
    kept: list[tuple[int, Chapter]] = []
    last = len(book.chapters) - 1
    for index, chapter in enumerate(book.chapters):
        if is_matter_heading(chapter.heading):
            left_out.append(
                LeftOut(
                    kind="matter chapter",
                    chapter_index=index,
                    chars=len(chapter.heading) + len(chapter.text),
                    opening=_opening(chapter.heading + " " + chapter.text),
                )
            )
            continue
        text = chapter.text
        if index == last:
            start = _back_matter_start(text)
            if start is not None:
                cut = text[start:]
                left_out.append(
                    LeftOut(kind="back matter", chapter_index=index, chars=len(cut), opening=_opening(cut))
                )
                text = text[:start].rstrip()
        text = _drop_bracketed(text, index, left_out)
        kept.append((index, replace(chapter, text=text)))
    return kept, left_out


def _pieces(sentence: str, limit: int) -> list[str]:
    """The authors' ``adjust_length``: a sentence longer than ``limit`` cut at its last space (or comma)."""
    pieces: list[str] = []
    while len(sentence) > limit:
        split = sentence.rfind(" ", 1, limit)
        if split == -1:
            split = sentence.rfind(",", 1, limit)
        if split == -1:
            split = limit
        pieces.append(sentence[:split])
        sentence = sentence[split:]
    if sentence:
        pieces.append(sentence)
    return pieces


def _pack(sentences: list[str], limit: int) -> tuple[list[str], int, set[int]]:
    """The authors' ``rechunk_book`` over sentences (overlong ones already in pieces).

    Returns the scenes, the number of overlong sentences and the scenes ending inside one.
    """
    scenes: list[str] = []
    current = ""
    current_ends_mid = False
    mid_ends: set[int] = set()
    overlong = 0
    for sentence in sentences:
        pieces = _pieces(sentence, limit)
        overlong += len(pieces) > 1
        for number, piece in enumerate(pieces):
            ends_mid = number < len(pieces) - 1
            if current and len(current) + len(piece) > limit:
                if current_ends_mid:
                    mid_ends.add(len(scenes))
                scenes.append(current)
                current = ""
            current += piece
            current_ends_mid = ends_mid
    if current:
        scenes.append(current)
    return scenes, overlong, mid_ends


def _sentences(narrative: str, heading_starts: list[int]) -> list[str]:
    """The narrative's sentences; a chapter heading is glued to the sentence after it."""
    headings = set(heading_starts)
    sentences: list[str] = []
    position = 0
    glue = False
    for sentence in split_sentences(narrative):
        if glue:
            sentences[-1] += sentence
        else:
            sentences.append(sentence)
        glue = position in headings and not glue
        position += len(sentence)
    return sentences


def cut_scenes(book: Book, settings: SceneSettings = SceneSettings()) -> SceneCut:
    """Cut a book's narrative into scenes (see the module doc for every rule)."""
    kept, left_out = narrative_chapters(book)
    story = replace(book, chapters=tuple(chapter for _, chapter in kept))
    narrative, offsets = story.render()
    texts, overlong, mid_ends = _pack(_sentences(narrative, offsets), settings.chars)
    if len(texts) < settings.min_scenes:
        raise TooLittleNarrativeError(
            book.source or None,
            f"book {book.id} ({book.title!r}) has {len(narrative):,} characters of narrative: "
            f"{len(texts)} scene(s) of at most {settings.chars:,} characters, {settings.min_scenes} needed",
            "choose a longer book, smaller scenes or a lower minimum number of scenes",
            item=book.id,
        )
    starts = [0]
    for text in texts[:-1]:
        starts.append(starts[-1] + len(text))
    scenes: list[Scene] = []
    for index, (start, text) in enumerate(zip(starts, texts, strict=True)):
        before = texts[index - 1][-settings.overlap :] if index > 0 and settings.overlap else ""
        after = texts[index + 1][: settings.overlap] if index + 1 < len(texts) else ""
        first_char = start + len(text) - len(text.lstrip())
        chapter = bisect.bisect_right(offsets, first_char) - 1
        scenes.append(
            Scene(
                index=index,
                text=text,
                overlapped=before + text + after,
                char_start=start,
                chapter_index=kept[max(chapter, 0)][0] if kept else None,
            )
        )
    return SceneCut(
        book_id=book.id,
        settings=settings,
        scenes=tuple(scenes),
        narrative=narrative,
        left_out=tuple(left_out),
        reader_notes=book.notes,
        split_sentences=overlong,
        mid_sentence_ends=tuple(sorted(mid_ends)),
    )
