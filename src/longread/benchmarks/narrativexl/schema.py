"""NarrativeXL's data: scenes with their summaries, read-along questions with every option's origin.

The names follow the authors' code (R-seny/NarrativeXL): a book is cut into
*scenes* (their "chunks"); each scene has a true summary and distorted ("fake")
summaries; a read-along question is asked after reading scene ``when_asked``
(scenes ``0..when_asked`` are read) and its true option is the summary of a
scene read so far. The official files (``*.tagseparated``,
``*.questions_shortform``, ``*.tagseparated_hierarch_sum``) are views of these
models (see :mod:`longread.benchmarks.narrativexl.official`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

NONE_OF_THE_ABOVE = "None of the above."
"""The authors' last option (``settings.noneabove_option``)."""

QuestionType = Literal["lookahead", "change", "otherbook"]
"""The decoy kind of a read-along question (the authors write Lookahead / Change / Otherbook)."""

OptionKind = Literal["true", "lookahead", "change", "otherbook", "none"]
"""Where an option came from: the true scene's summary, a decoy of one of the three kinds, or the
"None of the above." option."""

SceneStatus = Literal["OK", "Warning", "Fail"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Scene(_Frozen):
    """One sentence-aligned piece of a book's narrative, in reading order."""

    index: int
    text: str = Field(description="the scene as read (the authors' BookChunks column)")
    overlapped: str = Field(
        description="the text given to the summariser: up to `overlap` characters of the neighbouring "
        "scenes on each side (OverlappedBookChunks)"
    )
    char_start: int = Field(description="offset of `text` in the book's rendered narrative")
    chapter_index: int | None = Field(default=None, description="chapter the scene starts in")


class SceneSummaries(_Frozen):
    """What the generator made of one scene, with the authors' status column."""

    index: int
    summary: str | None = Field(description="the true summary; None when every attempt failed")
    distorted: tuple[str, ...] = Field(
        default=(), description="distorted summaries: same setting, different events, same length"
    )
    status: SceneStatus = "OK"
    comment: str = Field(default="", description="why the status is not OK (the authors' Comment column)")


class BookSummaries(_Frozen):
    """One book's scenes and summaries: the content of its ``.tagseparated`` file."""

    schema_version: int = SCHEMA_VERSION
    book_id: str
    scenes: tuple[Scene, ...]
    summaries: tuple[SceneSummaries, ...]


class HierarchicalSummary(_Frozen):
    """A summary of summaries: level 0 are scene summaries, the last level is one book summary."""

    level: int
    index: int = Field(description="position within its level")
    true: str
    false: str | None = Field(default=None, description="a distorted version (None: not made or failed)")
    first_scene: int | None = Field(default=None, description="first scene it covers (None: unknown)")
    last_scene: int | None = Field(default=None, description="last scene it covers (None: unknown)")
    merge_failure: str | None = Field(
        default=None,
        description="why merging the level below into this summary failed (no answer, empty, refusal); "
        "`true` is then empty. None: merged, a level-0 summary, or not recorded (files before this field)",
    )


class OptionSource(_Frozen):
    """Where one option's text was taken from, so anyone can audit the decoys."""

    kind: OptionKind
    book_id: str | None = Field(default=None, description="the book of the summary (None for 'none')")
    scene: int | None = Field(default=None, description="the scene it summarised (None: none or unknown)")
    distortion: int | None = Field(
        default=None, description="for 'change': which distorted summary of that scene"
    )


class Option(_Frozen):
    text: str
    source: OptionSource


class ReadAlongQuestion(_Frozen):
    """'Which of the following scenes was in the book?' asked after reading scenes 0..when_asked."""

    schema_version: int = SCHEMA_VERSION
    id: str
    book_id: str
    when_asked: int
    question_type: QuestionType
    options: tuple[Option, ...] = Field(description="the last one is always 'None of the above.'")
    answer: int = Field(description="0-based index of the right option")
    retention_demand: int = Field(
        description="scenes between the true scene and the reading position (when_asked - scene); "
        "for 'None of the above.' the whole book read so far (when_asked), as the authors count it"
    )
    true_scene: int | None = Field(description="the scene whose summary is right (None: none of the above)")

    @property
    def none_is_answer(self) -> bool:
        return self.true_scene is None


class CorrectionQuestion(_Frozen):
    """Rewrite a distorted hierarchical summary so that it matches the book read so far."""

    schema_version: int = SCHEMA_VERSION
    id: str
    book_id: str
    level: int
    index: int
    distorted: str
    target: str = Field(description="the true summary the correction is scored against")
    when_asked: int = Field(description="the last scene the summary covers: the question is asked after it")


class ReadingBook(_Frozen):
    """What the read-along evaluation needs of one book: scenes in order and questions at positions.

    Built from a longread build directory or from the authors' ``.questions_shortform`` files.
    """

    book_id: str
    scenes: tuple[str, ...]
    questions: tuple[ReadAlongQuestion, ...]
    source: str = Field(default="", description="the file it was read from")
    overlapped: tuple[str, ...] = Field(
        default=(),
        description="the scenes with their neighbours' overlap (the official OVERLAPPED_CHUNK column); "
        "empty when not known",
    )
