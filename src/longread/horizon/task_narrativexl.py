"""NarrativeXL read-along in a horizon campaign: each chosen question is a reading of its own, L is the
window (the book read so far, cut from the left, and the question's prompt), and the copy is the true
option's summary planted in the book D tokens before the question.

- **Instances**: questions whose book so far holds at least :data:`CHOOSE_CHARS` characters a token of the
  longest L (so nearly every one fills the window; those that do not are counted as not fitted). Each
  becomes a :class:`~longread.benchmarks.narrativexl.schema.ReadingBook` of its own, ``BOOK@QUESTION``,
  holding the scenes up to the question, the earlier ones emptied once :data:`KEEP_CHARS` characters a
  token of the longest L are kept (they lie before every window). Its questions' book stays the book, so
  ``replace`` never lends a question tokens of its own book, and intervals resample books.
- **Reading**: a read-along question under a control is read again from its tokens, cut from the left
  (:mod:`longread.evaluation.controls`), so every run of the campaign, the intact ones too, is the task
  wrapped with a control (``intact`` for the intact runs): the same cut-left windows.
- **Planting**: the true option's summary — whole, or its first ``--copy-tokens`` tokens where it is
  longer — is planted in the book read so far, D tokens before its end (before the prompt;
  :mod:`longread.text.planting`): an option is scored whole, so a copy of part of it moves its score
  little (a per-token mean the less, the shorter the part). A question can hold it when its answer is a
  scene (not "None of the above.") and the window's book part has room for the farthest distance. Where
  each copy lies is written beside the planted file (``planted-dD.placements.jsonl``).
- **Shortcut check**: the longest option, the shortest, and "None of the above." every time.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from longread.benchmarks.narrativexl.load import load_reading_books
from longread.benchmarks.narrativexl.readalong_rows import NarrativeXLSettings
from longread.benchmarks.narrativexl.schema import NONE_OF_THE_ABOVE, ReadAlongQuestion, ReadingBook
from longread.calibration.verdicts import Placement
from longread.evaluation.controls import ControlledTask, ControlSettings
from longread.evaluation.registry import make_task
from longread.evaluation.runner import RunOptions
from longread.evaluation.selection import select
from longread.horizon.outcomes import PLANTED_MARK
from longread.horizon.plan import HorizonPlan
from longread.horizon.tasks import HorizonError, Shortcuts, write_lines
from longread.text.planting import SLACK, Count, copy_opening, plant_in_text

CHOOSE_CHARS = 5
"""A question is chosen when its book so far holds this many characters a token of the longest L."""
KEEP_CHARS = 8
"""A reading keeps the last scenes holding this many characters a token of the longest L."""
PLACEMENTS = ".placements.jsonl"
RULES = ("longest", "shortest", "none of the above")


class NarrativeXLHorizon:
    name = "narrativexl"
    title = "NarrativeXL read-along"
    unit = "questions"

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings
        given = make_task("narrativexl", settings).settings
        assert isinstance(given, NarrativeXLSettings)
        self.separator, self.prompt = given.scene_separator, given.prompt

    def choose(self, data: Path, options: RunOptions, plan: HorizonPlan) -> list[ReadingBook]:
        longest = max(plan.prefix_lengths)
        readings = [
            _reading(book, question, self.separator, KEEP_CHARS * longest)
            for book in load_reading_books(data)
            for question in book.questions
            if _chars_read(book, question, self.separator) >= CHOOSE_CHARS * longest
        ]
        chosen = select(
            readings,
            limit=options.limit,
            sample=options.sample,
            seed=options.sample_seed,
            group_of=self.book_of,
            id_of=self.id_of,
        )
        if not chosen:
            raise HorizonError(
                f"{data}: no read-along question whose book so far holds {CHOOSE_CHARS * longest:,} "
                f"characters ({CHOOSE_CHARS} a token of L = {longest:,}); give longer books or smaller "
                "--prefix-lengths"
            )
        planted = [r.questions[0].id for r in chosen if PLANTED_MARK in r.questions[0].id]
        if planted:
            raise HorizonError(f"{data}: {planted[0]} is already planted; give the unplanted data")
        return chosen

    def id_of(self, instance: ReadingBook) -> str:
        return instance.questions[0].id

    def book_of(self, instance: ReadingBook) -> str:
        return instance.questions[0].book_id

    def lines(self, instances: Sequence[ReadingBook]) -> list[str]:
        return [i.model_dump_json() for i in instances]

    def task(self, length: int, control: ControlSettings | None) -> Any:
        task: Any = make_task("narrativexl", {**self.settings, "window": str(length)})
        return ControlledTask(task, control or ControlSettings("intact"))

    def _document(self, instance: ReadingBook) -> str:
        question = instance.questions[0]
        return self.separator.join(s for s in instance.scenes[: question.when_asked + 1] if s)

    def plantable(
        self, instances: Sequence[ReadingBook], count: Count, plan: HorizonPlan, length: int
    ) -> frozenset[str]:
        farthest = max(plan.distances_at(length))
        room = length - count(self.prompt) - SLACK - 1  # the window's book part, a copy's slack kept
        if farthest > room:
            return frozenset()
        found = set()
        for instance in instances:
            question = instance.questions[0]
            if question.true_scene is None:
                continue
            document = count(self._document(instance))
            if document - plan.copy_tokens - SLACK > farthest:
                found.add(question.id)
        return frozenset(found)

    def plant(
        self, instances: Sequence[ReadingBook], distance: int, count: Count, plan: HorizonPlan, file: Path
    ) -> Placement:
        planted, records = [], []
        for instance in instances:
            question = instance.questions[0]
            copy = copy_opening(question.options[question.answer].text, count, plan.copy_tokens)
            seed = f"{plan.seed}\0{question.id}\0{distance}".encode()
            rng = random.Random(int.from_bytes(hashlib.sha256(seed).digest()[:8]))
            done = plant_in_text(self._document(instance), copy, distance, count, rng)
            marked = question.model_copy(update={"id": f"{question.id}{PLANTED_MARK}{distance}"})
            scenes = ("",) * question.when_asked + (done.text,)
            planted.append(
                ReadingBook(
                    book_id=f"{instance.book_id}{PLANTED_MARK}{distance}", scenes=scenes, questions=(marked,)
                )
            )
            records.append({"id": marked.id, "distance": distance, "seed": plan.seed, **_record(done)})
        write_lines([p.model_dump_json() for p in planted], file)
        write_lines([json.dumps(r, sort_keys=True) for r in records], _placements_file(file))
        return _placement(records)

    def placement(self, file: Path) -> Placement | None:
        side = _placements_file(file)
        if not file.is_file() or not side.is_file():
            return None
        records = [json.loads(line) for line in side.read_text(encoding="utf-8").splitlines() if line]
        return _placement(records) if records else None

    def read_after(self, instances: Sequence[ReadingBook]) -> int:
        """The prompt and the options, at about 4 characters a token."""
        if not instances:
            return 0
        chars = sum(
            len(self.prompt) + sum(len(o.text) + 1 for o in i.questions[0].options) for i in instances
        )
        return round(chars / len(instances) / 4)

    def shortcuts(self, instances: Sequence[ReadingBook]) -> Shortcuts:
        hits = [0.0] * len(RULES)
        for instance in instances:
            question = instance.questions[0]
            for k, rule in enumerate(RULES):
                hits[k] += _rule_hit(rule, question)
        n = len(instances)
        options = sum(len(i.questions[0].options) for i in instances)
        return Shortcuts(RULES, n, tuple(h / n if n else 0.0 for h in hits), n / options if options else 0.0)


def _chars_read(book: ReadingBook, question: ReadAlongQuestion, separator: str) -> int:
    scenes = book.scenes[: question.when_asked + 1]
    return sum(len(s) for s in scenes) + len(separator) * (len(scenes) - 1)


def _reading(book: ReadingBook, question: ReadAlongQuestion, separator: str, keep: int) -> ReadingBook:
    """The question's own reading: the scenes up to it, those before the last ``keep`` characters empty."""
    last = question.when_asked
    first, held = last, len(book.scenes[last])
    while first > 0 and held < keep:
        first -= 1
        held += len(book.scenes[first]) + len(separator)
    scenes = ("",) * first + book.scenes[first : last + 1]
    return ReadingBook(book_id=f"{book.book_id}@{question.id}", scenes=scenes, questions=(question,))


def _record(done: Any) -> dict[str, Any]:
    fields = ("distance_tokens", "copy_tokens", "copy_chars", "at_char", "at_sentence", "cut_chars")
    return {name: getattr(done, name) for name in fields}


def _placement(records: Sequence[dict[str, Any]]) -> Placement:
    distance = int(records[0]["distance"])
    return Placement(
        distance,
        min(int(r["distance_tokens"]) for r in records),
        max(int(r["distance_tokens"]) for r in records),
        max(int(r["copy_tokens"]) for r in records),
    )


def _placements_file(file: Path) -> Path:
    return file.with_name(file.name.removesuffix(".jsonl") + PLACEMENTS)


def _rule_hit(rule: str, question: ReadAlongQuestion) -> float:
    """Expected hit of a rule on one question, a tie broken at random."""
    texts = [o.text for o in question.options]
    if rule == "none of the above":
        return 1.0 if texts[question.answer] == NONE_OF_THE_ABOVE else 0.0
    lengths = [len(t) for t in texts]
    best = max(lengths) if rule == "longest" else min(lengths)
    tied = [k for k, value in enumerate(lengths) if value == best]
    return 1.0 / len(tied) if question.answer in tied else 0.0
