"""Read-along and summary-correction questions, made as the authors' QuestionGeneration.py makes them.

After each scene ``p`` is read (``p = 0 .. n-1``) the generator tries one
question of each decoy kind, in this order (``RecognitionQuestionGenerator.advance``):

look-ahead
    decoys are true summaries of scenes not read yet, drawn without
    replacement from ``p+1 .. n-1``; no question when fewer than the decoys
    needed remain (``p > n - (decoys + 1)``).
change
    decoys are distorted summaries of scenes read so far: one scene at a time
    is drawn with weight = how many of its distorted summaries are still
    unused, then that many distinct distorted summaries are drawn from each
    chosen scene and the decoys are shuffled; no question when fewer distorted
    summaries than decoys exist in ``0 .. p``.
other-book
    decoys are summaries of uniformly drawn scenes of distinct other books
    (one per book), passed through ``adapt(text, from_book_id, to_book_id)``
    (the authors put this book's character names in); no question when fewer
    other books than decoys exist, unless ``otherbook_reuse_books`` allows a
    book to give several decoys.

Every question first draws whether "None of the above." is the answer, with
probability ``1 / (n_decoys + 2)`` (1/6); then it has ``n_decoys + 1`` decoys,
otherwise ``n_decoys`` decoys plus the true summary of a scene drawn uniformly
from ``0 .. p``, inserted at a uniform position before "None of the above."
(always last). Retention demand is ``p - true scene``, or ``p`` when "None of
the above." is right. A question whose true summary or any decoy is missing
(a Fail scene, as the authors' ``IsComplete``) is dropped after it is drawn.
Random draws happen in the authors' order, one ``numpy.random.Generator``
for the whole book; what is dropped is counted by kind and reason.

Not in the authors' code: a question never shows one text twice. Options are
compared after folding whitespace and case (:func:`option_key`); two summaries
that came out the same (a weak summariser can write the same text for two
scenes) would make a question with a right and a wrong copy of one text. Such a
question is drawn again from the same generator, up to ``MAX_REDRAWS`` times,
and skipped when every draw repeats a text; redraws and skips are counted by
kind and reason. A book whose summaries are all different draws exactly as the
authors' code does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from longread.benchmarks.narrativexl.official import question_id
from longread.benchmarks.narrativexl.schema import (
    NONE_OF_THE_ABOVE,
    BookSummaries,
    CorrectionQuestion,
    HierarchicalSummary,
    Option,
    OptionSource,
    QuestionType,
    ReadAlongQuestion,
)
from longread.errors import BadInputError

Adapt = Callable[[str, str, str], str]
"""``adapt(text, from_book_id, to_book_id)``: an other book's summary with this book's entities."""

SKIP_TOO_CLOSE_TO_END = "too close to the end of the book for enough unread scenes"
SKIP_TOO_FEW_DISTORTED = "too few distorted summaries among the scenes read"
SKIP_TOO_FEW_BOOKS = "fewer other books than decoys"
SKIP_INCOMPLETE = "a failed summary among the options"
SKIP_REPEATED_OPTION = "two options with the same text in every draw"
REDRAWN_REPEATED_OPTION = "two options with the same text"
MAX_REDRAWS = 10
"""How often a question whose options repeat a text is drawn again before it is skipped."""


def option_key(text: str) -> str:
    """What two options are compared by: the text with runs of whitespace as one space, case folded."""
    return " ".join(text.split()).casefold()


def repeated_option(texts: Sequence[str]) -> tuple[int, int] | None:
    """The positions of the first two texts that are the same under :func:`option_key`, or None."""
    seen: dict[str, int] = {}
    for position, text in enumerate(texts):
        key = option_key(text)
        if key in seen:
            return seen[key], position
        seen[key] = position
    return None


def keep_text(text: str, from_book_id: str, to_book_id: str) -> str:
    """The default ``adapt``: the other book's summary unchanged."""
    return text


class QuestionSettings(BaseModel):
    """The authors' settings.py question parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lookahead_per_step: int = Field(default=1, ge=0)
    change_per_step: int = Field(default=1, ge=0)
    otherbook_per_step: int = Field(default=1, ge=0)
    n_decoys: int = Field(
        default=4, ge=1, description="decoys besides the true option and 'None of the above.'"
    )
    otherbook_reuse_books: bool = Field(
        default=False,
        description="when fewer other books than decoys exist, let one book give several decoys "
        "(False: the authors' rule; the question is skipped and counted)",
    )


class GeneratedQuestions(BaseModel):
    """One book's read-along questions and what was not made, by ``"kind: reason"``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    book_id: str
    questions: tuple[ReadAlongQuestion, ...]
    skipped: dict[str, int] = Field(default_factory=dict)
    redrawn: dict[str, int] = Field(
        default_factory=dict, description="questions drawn again (two options with one text), by reason"
    )


_Drawn = tuple[str | None, OptionSource]


class _Book:
    """One book's summaries as the authors' BookProcessor holds them."""

    def __init__(self, book: BookSummaries) -> None:
        self.book_id = book.book_id
        self.summaries: list[str | None] = [
            None if item.status == "Fail" or not item.summary else item.summary for item in book.summaries
        ]
        # (index in SceneSummaries.distorted, text) of each usable distorted summary
        self.distorted: list[list[tuple[int, str]]] = [
            [(k, text) for k, text in enumerate(item.distorted) if text] if item.status != "Fail" else []
            for item in book.summaries
        ]
        self.weights = np.array([len(d) for d in self.distorted], dtype=np.int64)

    def __len__(self) -> int:
        return len(self.summaries)

    def random_summary(self, rng: np.random.Generator, up_to: int | None = None) -> _Drawn:
        """``get_random_summary``: a uniformly drawn scene among ``0 .. up_to-1`` and its summary."""
        scene = int(rng.choice(np.arange(len(self) if up_to is None else up_to)))
        source = OptionSource(kind="true", book_id=self.book_id, scene=scene)
        return self.summaries[scene], source


class _Generator:
    def __init__(
        self,
        book: BookSummaries,
        other_books: Sequence[BookSummaries],
        rng: np.random.Generator,
        settings: QuestionSettings,
        adapt: Adapt,
    ) -> None:
        self.book = _Book(book)
        self.others = [_Book(other) for other in other_books]
        self.rng = rng
        self.settings = settings
        self.adapt = adapt
        self.skipped: Counter[str] = Counter()
        self.redrawn: Counter[str] = Counter()

    def _decoy_count(self) -> tuple[bool, int]:
        n_decoys = self.settings.n_decoys
        no_true_answer = bool(self.rng.random() < 1 / (n_decoys + 2))
        return no_true_answer, n_decoys + 1 if no_true_answer else n_decoys

    def _true_answer(self, position: int) -> tuple[_Drawn, int]:
        """The true option and the retention demand (drawn only when a scene is the answer)."""
        drawn = self.book.random_summary(self.rng, position + 1)
        assert drawn[1].scene is not None
        return drawn, position - drawn[1].scene

    def lookahead(self, position: int) -> tuple[bool, _Drawn | None, list[_Drawn], int] | None:
        none_answer, n_decoys = self._decoy_count()
        if position > len(self.book) - (n_decoys + 1):
            self.skipped[f"lookahead: {SKIP_TOO_CLOSE_TO_END}"] += 1
            return None
        scenes = self.rng.choice(np.arange(position + 1, len(self.book)), n_decoys, replace=False)
        decoys: list[_Drawn] = [
            (
                self.book.summaries[int(s)],
                OptionSource(kind="lookahead", book_id=self.book.book_id, scene=int(s)),
            )
            for s in scenes
        ]
        if none_answer:
            return True, None, decoys, position
        true, demand = self._true_answer(position)
        return False, true, decoys, demand

    def change(self, position: int) -> tuple[bool, _Drawn | None, list[_Drawn], int] | None:
        none_answer, n_decoys = self._decoy_count()
        weights = self.book.weights[: position + 1].copy()
        if weights.sum() < n_decoys:
            self.skipped[f"change: {SKIP_TOO_FEW_DISTORTED}"] += 1
            return None
        picks: Counter[int] = Counter()
        for _ in range(n_decoys):
            scene = int(self.rng.choice(np.arange(position + 1), p=weights / weights.sum()))
            weights[scene] -= 1
            picks[scene] += 1
        decoys: list[_Drawn] = []
        for scene, count in picks.items():
            available = self.book.distorted[scene]
            for k in self.rng.choice(np.arange(len(available)), count, replace=False):
                distortion, text = available[int(k)]
                source = OptionSource(
                    kind="change", book_id=self.book.book_id, scene=scene, distortion=distortion
                )
                decoys.append((text, source))
        self.rng.shuffle(decoys)  # type: ignore[arg-type]  # a list shuffles in place like the authors' list
        if none_answer:
            return True, None, decoys, position
        true, demand = self._true_answer(position)
        return False, true, decoys, demand

    def otherbook(self, position: int) -> tuple[bool, _Drawn | None, list[_Drawn], int] | None:
        none_answer, n_decoys = self._decoy_count()
        true: _Drawn | None = None
        demand = position
        if not none_answer:
            true, demand = self._true_answer(position)
        if len(self.others) < n_decoys and not (self.settings.otherbook_reuse_books and self.others):
            self.skipped[f"otherbook: {SKIP_TOO_FEW_BOOKS}"] += 1
            return None
        replace = len(self.others) < n_decoys
        chosen = self.rng.choice(np.arange(len(self.others)), size=n_decoys, replace=replace)
        decoys: list[_Drawn] = []
        for b in chosen:
            other = self.others[int(b)]
            text, source = other.random_summary(self.rng)
            source = source.model_copy(update={"kind": "otherbook"})
            adapted = None if text is None else self.adapt(text, other.book_id, self.book.book_id)
            decoys.append((adapted, source))
        return none_answer, true, decoys, demand

    def build(
        self,
        question_type: QuestionType,
        ordinal: int,
        position: int,
        drawn: tuple[bool, _Drawn | None, list[_Drawn], int],
    ) -> ReadAlongQuestion | None:
        """``RecognitionQuestion``: options in order, the answer's position drawn, then ``IsComplete``."""
        none_answer, true, decoys, demand = drawn
        options: list[_Drawn] = list(decoys)
        if none_answer:
            answer = len(options)
            options.append((NONE_OF_THE_ABOVE, OptionSource(kind="none")))
        else:
            assert true is not None
            options.append((NONE_OF_THE_ABOVE, OptionSource(kind="none")))
            answer = int(self.rng.integers(len(options)))  # before "None of the above."
            options.insert(answer, true)
        if any(text is None for text, _ in options):
            self.skipped[f"{question_type}: {SKIP_INCOMPLETE}"] += 1
            return None
        return ReadAlongQuestion(
            id=question_id(self.book.book_id, position, question_type, ordinal),
            book_id=self.book.book_id,
            when_asked=position,
            question_type=question_type,
            options=tuple(Option(text=text, source=source) for text, source in options if text is not None),
            answer=answer,
            retention_demand=demand,
            true_scene=None if none_answer or true is None else true[1].scene,
        )

    def question(self, question_type: QuestionType, ordinal: int, position: int) -> ReadAlongQuestion | None:
        """One question of a kind, drawn again while two of its options repeat a text (see the module doc)."""
        draws = {"lookahead": self.lookahead, "change": self.change, "otherbook": self.otherbook}
        draw = draws[question_type]
        for attempt in range(MAX_REDRAWS + 1):
            drawn = draw(position)
            if drawn is None:
                return None
            question = self.build(question_type, ordinal, position, drawn)
            if question is None or repeated_option([o.text for o in question.options]) is None:
                return question
            if attempt < MAX_REDRAWS:
                self.redrawn[f"{question_type}: {REDRAWN_REPEATED_OPTION}"] += 1
        self.skipped[f"{question_type}: {SKIP_REPEATED_OPTION}"] += 1
        return None

    def run(self) -> list[ReadAlongQuestion]:
        questions: list[ReadAlongQuestion] = []
        plan: list[tuple[QuestionType, int]] = [
            ("lookahead", self.settings.lookahead_per_step),
            ("change", self.settings.change_per_step),
            ("otherbook", self.settings.otherbook_per_step),
        ]
        for position in range(len(self.book)):
            for question_type, count in plan:
                made = 0
                for _ in range(count):
                    question = self.question(question_type, made, position)
                    if question is not None:
                        questions.append(question)
                        made += 1
        return questions


def make_readalong_questions(
    book: BookSummaries,
    other_books: Sequence[BookSummaries],
    rng: np.random.Generator,
    settings: QuestionSettings | None = None,
    adapt: Adapt = keep_text,
) -> GeneratedQuestions:
    """All read-along questions of one book, in reading order (see the module docstring for the rules).

    ``other_books`` are the books other-book decoys come from (not ``book``
    itself). A book without any distorted summary is refused, as the authors
    refuse it.
    """
    settings = settings or QuestionSettings()
    if any(other.book_id == book.book_id for other in other_books):
        raise ValueError(f"book {book.book_id} is among its own other books")
    generator = _Generator(book, other_books, rng, settings, adapt)
    if int(generator.book.weights.sum()) == 0:
        raise BadInputError(
            None,
            "no distorted summaries: change questions cannot be made (the authors refuse such books)",
            "generate distorted summaries for this book or leave it out",
            item=f"book {book.book_id}",
        )
    questions = generator.run()
    return GeneratedQuestions(
        book_id=book.book_id,
        questions=tuple(questions),
        skipped=dict(generator.skipped),
        redrawn=dict(generator.redrawn),
    )


def drop_repeated_options(
    questions: Sequence[ReadAlongQuestion], reason: str
) -> tuple[list[ReadAlongQuestion], Counter[str]]:
    """The questions whose options are all different (:func:`option_key`), and the others counted as
    ``"kind: reason"`` (for texts changed after drawing, e.g. by renaming)."""
    kept: list[ReadAlongQuestion] = []
    dropped: Counter[str] = Counter()
    for question in questions:
        if repeated_option([option.text for option in question.options]) is None:
            kept.append(question)
        else:
            dropped[f"{question.question_type}: {reason}"] += 1
    return kept, dropped


def make_correction_questions(
    book_id: str, hierarchical: Sequence[HierarchicalSummary], n_scenes: int | None = None
) -> list[CorrectionQuestion]:
    """One summary-correction question per hierarchical summary that has a false version.

    It is asked after the last scene the summary covers; when that is unknown,
    after the book's last scene (``n_scenes - 1``; by default the number of
    level-0 summaries, which are one per scene).
    """
    if n_scenes is None:
        n_scenes = sum(1 for item in hierarchical if item.level == 0)
    if n_scenes <= 0:
        raise ValueError(
            f"book {book_id}: the number of scenes is unknown (no level-0 summaries); pass n_scenes"
        )
    questions = []
    for item in hierarchical:
        if item.false is None:
            continue
        when_asked = item.last_scene if item.last_scene is not None else n_scenes - 1
        questions.append(
            CorrectionQuestion(
                id=f"{book_id}/correction/{item.level}/{item.index}",
                book_id=book_id,
                level=item.level,
                index=item.index,
                distorted=item.false,
                target=item.true,
                when_asked=when_asked,
            )
        )
    return questions
