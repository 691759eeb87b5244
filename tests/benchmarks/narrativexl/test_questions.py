"""Read-along questions drawn as the authors' QuestionGeneration.py draws them, on real novels."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from functools import cache
from typing import Any, cast

import numpy as np
import pytest

from longread.benchmarks.narrativexl.build.book_output import rename_question
from longread.benchmarks.narrativexl.names import EntityEntry, EntityMap
from longread.benchmarks.narrativexl.official import (
    OFFICIAL_TYPE_NAMES,
    question_string,
    questions_shortform_text,
)
from longread.benchmarks.narrativexl.questions import (
    MAX_REDRAWS,
    REDRAWN_REPEATED_OPTION,
    SKIP_INCOMPLETE,
    SKIP_REPEATED_OPTION,
    SKIP_TOO_CLOSE_TO_END,
    SKIP_TOO_FEW_BOOKS,
    QuestionSettings,
    drop_repeated_options,
    make_correction_questions,
    make_readalong_questions,
)
from longread.benchmarks.narrativexl.schema import (
    NONE_OF_THE_ABOVE,
    BookSummaries,
    HierarchicalSummary,
    ReadAlongQuestion,
    SceneSummaries,
)
from longread.errors import BadInputError
from tests.benchmarks.narrativexl.books import main_book, other_books
from tests.helpers import TEST_DATA, needs_shared

pytestmark = needs_shared
REFERENCE = TEST_DATA / "narrativexl" / "authors_reference.json"


def tagged_adapt(text: str, from_book: str, to_book: str) -> str:
    """An adaptation that shows which books it was called with."""
    return f"[{from_book}->{to_book}] {text}"


@cache
def books() -> tuple[BookSummaries, tuple[BookSummaries, ...]]:
    return main_book(), tuple(other_books())


@cache
def generated(seed: int) -> tuple[tuple[ReadAlongQuestion, ...], dict[str, int]]:
    book, others = books()
    result = make_readalong_questions(book, others, np.random.default_rng(seed), adapt=tagged_adapt)
    return result.questions, result.skipped


def all_questions(seeds: range) -> list[ReadAlongQuestion]:
    return [q for seed in seeds for q in generated(seed)[0]]


class LegacyRandom:
    """The authors' global numpy RNG (RandomState) behind the Generator methods longread calls."""

    def __init__(self, seed: int) -> None:
        self.state = np.random.RandomState(seed)

    def random(self) -> float:
        return float(self.state.random_sample())

    def integers(self, high: int) -> int:
        return int(self.state.randint(high))

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
        return self.state.choice(a, size, replace, p)

    def shuffle(self, x: Any) -> None:
        self.state.shuffle(x)


def test_every_question_has_the_authors_shape() -> None:
    book, others = books()
    questions = all_questions(range(3))
    assert len(questions) > 250
    summary = {item.index: item.summary for item in book.summaries}
    failed = {item.index for item in book.summaries if item.summary is None}
    other_summary = {(o.book_id, item.index): item.summary for o in others for item in o.summaries}
    for q in questions:
        assert q.id == f"{book.book_id}/{q.when_asked}/{q.question_type}"
        assert len(q.options) == 6
        assert q.options[-1].text == NONE_OF_THE_ABOVE and q.options[-1].source.kind == "none"
        assert sum(o.source.kind in ("true", "none") for o in q.options) == (1 if q.none_is_answer else 2)
        right = q.options[q.answer]
        if q.none_is_answer:
            assert q.answer == 5 and q.retention_demand == q.when_asked and q.true_scene is None
        else:
            assert q.answer < 5 and q.true_scene is not None
            assert 0 <= q.true_scene <= q.when_asked and q.true_scene not in failed
            assert right.source.kind == "true" and right.source.scene == q.true_scene
            assert right.text == summary[q.true_scene]
            assert q.retention_demand == q.when_asked - q.true_scene
        decoys = [o for k, o in enumerate(q.options) if k != q.answer and o.source.kind != "none"]
        assert len(decoys) == (5 if q.none_is_answer else 4)
        assert {o.source.kind for o in decoys} == {q.question_type}
        for option in decoys:
            source = option.source
            assert source.scene is not None
            if q.question_type == "lookahead":
                assert source.book_id == book.book_id and q.when_asked < source.scene < len(book.scenes)
                assert option.text == summary[source.scene]
            elif q.question_type == "change":
                assert source.book_id == book.book_id and 0 <= source.scene <= q.when_asked
                assert source.distortion is not None
                assert option.text == book.summaries[source.scene].distorted[source.distortion]
            else:
                assert source.book_id != book.book_id and source.book_id is not None
                assert (
                    option.text
                    == f"[{source.book_id}->{book.book_id}] {other_summary[(source.book_id, source.scene)]}"
                )
        if q.question_type == "otherbook":  # one decoy per other book
            assert len({o.source.book_id for o in decoys}) == len(decoys)
        if q.question_type == "change":  # a distorted summary is used once per question
            assert len({(o.source.scene, o.source.distortion) for o in decoys}) == len(decoys)


def test_none_of_the_above_is_right_one_time_in_six_and_answers_spread_evenly() -> None:
    questions = all_questions(range(12))
    n = len(questions)
    none_share = sum(q.none_is_answer for q in questions) / n
    sigma = (1 / 6 * 5 / 6 / n) ** 0.5
    assert abs(none_share - 1 / 6) < 4 * sigma, (none_share, n)
    positions = Counter(q.answer for q in questions if not q.none_is_answer)
    for position in range(5):
        assert abs(positions[position] / n - 1 / 6) < 0.04, positions
    # each kind has its own none-of-the-above draw: all three get some
    for kind in ("lookahead", "change", "otherbook"):
        assert any(q.none_is_answer for q in questions if q.question_type == kind)


def test_the_true_scene_is_uniform_over_the_scenes_read() -> None:
    questions = [q for q in all_questions(range(12)) if q.true_scene is not None and q.when_asked >= 9]
    # u = position of the true scene within 0..when_asked, uniform on (0, 1) when the draw is uniform
    # (failed scenes drop a few draws; their neighbours in u are close, the mean barely moves)
    u = np.array([(q.true_scene + 0.5) / (q.when_asked + 1) for q in questions if q.true_scene is not None])
    assert len(u) > 600
    assert abs(u.mean() - 0.5) < 4 * (1 / 12 / len(u)) ** 0.5 + 0.01
    counts = np.histogram(u, bins=4, range=(0, 1))[0] / len(u)
    assert np.all(np.abs(counts - 0.25) < 0.06), counts


def test_what_is_skipped_is_counted_and_accounts_for_every_draw() -> None:
    book, _ = books()
    n = len(book.scenes)
    for seed in range(3):
        questions, skipped = generated(seed)
        made = Counter(q.question_type for q in questions)
        for kind in ("lookahead", "change", "otherbook"):
            tried = made[kind] + sum(
                count for reason, count in skipped.items() if reason.startswith(f"{kind}: ")
            )
            assert tried == n, (kind, made, skipped)
        # the last 4 positions lack 4 unread scenes; position 35 has them only without none-of-the-above
        assert skipped[f"lookahead: {SKIP_TOO_CLOSE_TO_END}"] >= 4
        assert not any(q.when_asked > 35 for q in questions if q.question_type == "lookahead")
        # scenes 7 and 23 failed: options drawn from them drop the question
        assert (
            skipped.get(f"lookahead: {SKIP_INCOMPLETE}", 0) + skipped.get(f"change: {SKIP_INCOMPLETE}", 0) > 0
        )


def test_too_few_other_books_skips_other_book_questions_unless_reuse_is_allowed() -> None:
    book, others = books()
    few = others[:3]
    result = make_readalong_questions(book, few, np.random.default_rng(0))
    assert not any(q.question_type == "otherbook" for q in result.questions)
    assert result.skipped[f"otherbook: {SKIP_TOO_FEW_BOOKS}"] == len(book.scenes)
    reuse = make_readalong_questions(
        book, few, np.random.default_rng(0), QuestionSettings(otherbook_reuse_books=True)
    )
    other_qs = [q for q in reuse.questions if q.question_type == "otherbook"]
    assert len(other_qs) > 20
    books_used = [{o.source.book_id for o in q.options if o.source.kind == "otherbook"} for q in other_qs]
    assert all(used <= {o.book_id for o in few} for used in books_used)


def test_same_seed_same_questions_other_seed_other_questions() -> None:
    book, others = books()
    again = make_readalong_questions(book, others, np.random.default_rng(0), adapt=tagged_adapt)
    assert again.questions == generated(0)[0]
    assert questions_shortform_text(book.scenes, again.questions) == questions_shortform_text(
        book.scenes, generated(0)[0]
    )
    assert generated(1)[0] != generated(0)[0]


def test_draws_match_the_authors_code_question_for_question() -> None:
    """The authors' RecognitionQuestionGenerator (recorded from their code) and ours on one RNG stream."""
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    book, others = books()
    rng = cast(np.random.Generator, LegacyRandom(reference["seed"]))
    result = make_readalong_questions(book, others, rng)
    ours = [
        {
            "when_asked": q.when_asked,
            "position": q.when_asked,
            "type": OFFICIAL_TYPE_NAMES[q.question_type],
            "answer": str(q.answer + 1),
            "memload": q.retention_demand,
            "text_sha256": hashlib.sha256(question_string([o.text for o in q.options]).encode()).hexdigest(),
        }
        for q in result.questions
    ]
    assert len(ours) == len(reference["questions"]) == 107
    assert ours == reference["questions"]
    text = questions_shortform_text(book.scenes, result.questions)
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == reference["questions_shortform_sha256"]


def test_a_book_without_distorted_summaries_is_refused() -> None:
    book, others = books()
    bare = book.model_copy(
        update={"summaries": tuple(SceneSummaries(index=s.index, summary=s.summary) for s in book.summaries)}
    )
    with pytest.raises(BadInputError, match=r"book 84.*no distorted summaries"):
        make_readalong_questions(bare, others, np.random.default_rng(0))
    with pytest.raises(ValueError, match="among its own other books"):
        make_readalong_questions(book, [book], np.random.default_rng(0))


def test_correction_questions_are_asked_after_the_last_scene_they_cover() -> None:
    items = [
        HierarchicalSummary(level=0, index=0, true="a", false="a'", first_scene=0, last_scene=0),
        HierarchicalSummary(level=0, index=1, true="b", false=None, first_scene=1, last_scene=1),
        HierarchicalSummary(level=0, index=2, true="c", false="c'", first_scene=2, last_scene=2),
        HierarchicalSummary(level=1, index=0, true="ab", false="ab'", first_scene=0, last_scene=1),
        HierarchicalSummary(level=1, index=1, true="c2", false="c2'"),
    ]
    questions = make_correction_questions("84", items)
    assert [(q.id, q.when_asked, q.distorted, q.target) for q in questions] == [
        ("84/correction/0/0", 0, "a'", "a"),
        ("84/correction/0/2", 2, "c'", "c"),
        ("84/correction/1/0", 1, "ab'", "ab"),
        ("84/correction/1/1", 2, "c2'", "c2"),  # range unknown: after the book's last scene
    ]
    assert make_correction_questions("84", items, n_scenes=10)[-1].when_asked == 9
    with pytest.raises(ValueError, match="pass n_scenes"):
        make_correction_questions("84", items[3:])


def test_settings_are_frozen_and_checked() -> None:
    settings = QuestionSettings()
    assert (settings.n_decoys, settings.lookahead_per_step, settings.otherbook_reuse_books) == (4, 1, False)
    with pytest.raises(ValueError):
        QuestionSettings(n_decoys=0)
    with pytest.raises(ValueError):
        settings.n_decoys = 3  # type: ignore[misc]


def _with_summaries(book: BookSummaries, texts: dict[int, str]) -> BookSummaries:
    summaries = tuple(
        item.model_copy(update={"summary": texts[item.index]}) if item.index in texts else item
        for item in book.summaries
    )
    return book.model_copy(update={"summaries": summaries})


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.split()).lower() == " ".join(b.split()).lower()


def test_no_question_shows_one_text_twice_it_is_drawn_again_and_counted() -> None:
    """Two scenes whose summaries came out the same (as a weak summariser writes them): scene 9 gets
    scene 10's real summary, in other case and spacing; scene 30 gets the text of scene 31."""
    book, others = books()
    text = {item.index: item.summary or "" for item in book.summaries}
    twins = _with_summaries(
        book, {9: "  " + text[10].upper().replace(" ", "\n  "), 30: text[31].lower() + "\n"}
    )
    redrawn = 0
    for seed in range(4):
        result = make_readalong_questions(twins, others, np.random.default_rng(seed))
        for q in result.questions:
            texts = [o.text for o in q.options]
            assert not any(_same_text(a, b) for i, a in enumerate(texts) for b in texts[i + 1 :]), (
                f"seed {seed}: {q.id} repeats a text"
            )
        made = Counter(q.question_type for q in result.questions)
        for kind in ("lookahead", "change", "otherbook"):
            tried = made[kind] + sum(n for reason, n in result.skipped.items() if reason.startswith(kind))
            assert tried == len(book.scenes), "every position still gives a question or a counted skip"
        assert set(result.redrawn) <= {f"{k}: {REDRAWN_REPEATED_OPTION}" for k in ("lookahead", "change")}
        redrawn += sum(result.redrawn.values())
        again = make_readalong_questions(twins, others, np.random.default_rng(seed))
        assert again == result, "redraws come from the same seeded generator"
    assert redrawn > 0, "the twin summaries met in some question and were drawn again"


def test_a_question_that_repeats_a_text_in_every_draw_is_skipped_and_counted() -> None:
    book, others = books()
    same = book.summaries[0].summary or ""
    one_text = _with_summaries(book, {item.index: same for item in book.summaries if item.summary})
    result = make_readalong_questions(one_text, others, np.random.default_rng(0))
    # look-ahead decoys are all this one text: no look-ahead question can be made
    assert not any(q.question_type == "lookahead" for q in result.questions)
    skips = result.skipped[f"lookahead: {SKIP_REPEATED_OPTION}"]
    assert skips > 0
    assert result.redrawn[f"lookahead: {REDRAWN_REPEATED_OPTION}"] >= skips * MAX_REDRAWS // 2
    # other-book questions hold one summary of this book at most: they are still made
    assert any(q.question_type == "otherbook" for q in result.questions)


def test_options_made_equal_by_renaming_drop_the_question_and_count_it() -> None:
    """An other-book summary may hold a word this book's map uses as a replacement: renamed, it can
    equal a summary of this book. Such a question is dropped after renaming and counted."""
    book, others = books()
    questions = list(make_readalong_questions(book, others, np.random.default_rng(0)).questions)
    question = next(q for q in questions if q.question_type == "otherbook" and not q.none_is_answer)
    true_text = question.options[question.answer].text
    word = re.findall(r"\b[A-Z][a-z]{3,}\b", true_text)[0]
    twin = question.model_copy(
        update={
            "options": tuple(
                o.model_copy(update={"text": true_text.replace(word, "Zebulon")})
                if k == (question.answer + 1) % 5
                else o
                for k, o in enumerate(question.options)
            )
        }
    )
    names = EntityMap(
        book_id=book.book_id,
        seed=0,
        entries=(EntityEntry(original=word, replacement="Zebulon", kind="first", gender="male", mentions=1),),
    )
    renamed = [rename_question(q, names) for q in [twin, *questions[:5]]]
    kept, dropped = drop_repeated_options(renamed, "same after renaming")
    assert dropped == Counter({"otherbook: same after renaming": 1})
    assert kept == renamed[1:]
