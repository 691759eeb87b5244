"""The repetition check: real SmolLM2 answers that loop warn with the reason; real prose never does."""

from __future__ import annotations

import json
import re
from dataclasses import replace

from longread.benchmarks.narrativexl.scenes import SceneSettings, cut_scenes
from longread.benchmarks.narrativexl.summaries import SummarySettings, check_text, repetition
from longread.documents.reader import read_book
from tests.benchmarks.narrativexl.books import OTHER_BOOKS, make_book
from tests.helpers import REPO_ROOT, TEST_DATA, needs_shared

LOOPS = json.loads((TEST_DATA / "narrativexl" / "smollm2_loops.json").read_text(encoding="utf-8"))["answers"]
BOOKS = REPO_ROOT / "src" / "longread" / "data" / "books"


def test_real_smollm2_loops_are_warnings_that_say_how_they_loop() -> None:
    settings = SummarySettings()
    assert len(LOOPS) == 4
    for answer in LOOPS:
        text = answer["text"]
        problems = check_text(text, source=text * 20, settings=settings)  # a long source: no length warning
        loops = [p for p in problems if p.message.startswith("loops")]
        assert len(loops) == 1 and not loops[0].fatal, (answer["label"], problems)
        assert repetition(text, settings) == loops[0].message
    # what each says: the clause said over and over, the sentence said again
    messages = [repetition(answer["text"], settings) or "" for answer in LOOPS]
    assert re.search(r"of its 4-word runs repeat an earlier one \('.+' \d+ times\)", messages[0])
    assert "a sentence said" in messages[2] and "he was a king of the court" in messages[2]
    assert "a sentence said" in messages[3] and "chinese lottery" in messages[3]


def test_one_sentence_is_no_loop_and_the_bounds_are_the_settings() -> None:
    text = LOOPS[2]["text"]
    first_sentence = text.split(". ")[0] + "."
    assert repetition(first_sentence, SummarySettings()) is None
    strict = SummarySettings(repeated_sentence_words=50, repetition_threshold=0.99)
    assert repetition(text, strict) is None  # the bounds are the settings'


@needs_shared
def test_real_prose_and_real_first_sentences_never_count_as_loops() -> None:
    """Scenes of six Gutenberg novels (their first two sentences as 'summaries', the scene texts too) and
    the first chapters of Pride and Prejudice: no false alarm."""
    settings = SummarySettings()
    checked = 0
    for gutenberg_id in OTHER_BOOKS:
        book = make_book(gutenberg_id, 12)
        for scene, item in zip(book.scenes, book.summaries, strict=True):
            assert repetition(item.summary or "", settings) is None, (gutenberg_id, item.summary)
            assert repetition(scene.text, settings) is None, (gutenberg_id, scene.index)
            checked += 1
    pride = read_book(BOOKS / "pg1342.txt.gz")
    cut = cut_scenes(replace(pride, chapters=pride.chapters[:6]), SceneSettings(min_scenes=1))
    for scene in cut.scenes:
        assert repetition(scene.text, settings) is None, scene.index
        checked += 1
    assert checked > 80
