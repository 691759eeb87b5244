"""NarrativeXL scenes on real Gutenberg novels: order, coverage, sentence ends, sizes, overlap, matter."""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import replace

import pytest

from longread.benchmarks.narrativexl.scenes import (
    SceneCut,
    SceneSettings,
    TooLittleNarrativeError,
    cut_scenes,
    is_matter_heading,
)
from longread.documents.book import Book, Chapter
from longread.documents.reader import read_book
from longread.models.suffixlm.segments import split_sentences
from tests.helpers import REPO_ROOT, gutenberg_book, needs_shared

PRIDE = REPO_ROOT / "src" / "longread" / "data" / "books" / "pg1342.txt.gz"


@functools.cache
def pride() -> Book:
    return read_book(PRIDE)


@functools.cache
def pride_cut() -> SceneCut:
    return cut_scenes(pride())


def _ends(cut: SceneCut) -> list[int]:
    return [scene.char_start + len(scene.text) for scene in cut.scenes]


def test_scenes_join_back_to_the_narrative_in_order() -> None:
    cut = pride_cut()
    assert cut.left_out == ()  # Pride and Prejudice has no notes, glossary or illustrations
    assert cut.narrative == pride().render()[0]
    assert "".join(scene.text for scene in cut.scenes) == cut.narrative
    assert [scene.index for scene in cut.scenes] == list(range(len(cut.scenes)))
    for scene in cut.scenes:
        assert cut.narrative[scene.char_start : scene.char_start + len(scene.text)] == scene.text
    assert 200 <= len(cut.scenes) <= 260  # 684,620 characters in scenes of at most 3,000
    chapters = [scene.chapter_index for scene in cut.scenes]
    assert chapters[0] == 0 and chapters[-1] == len(pride().chapters) - 1
    assert chapters == sorted(chapters)  # type: ignore[type-var]


def test_scenes_end_at_sentence_ends_and_are_packed_greedily() -> None:
    cut = pride_cut()
    sentence_starts = set(itertools.accumulate(len(s) for s in split_sentences(cut.narrative)))
    assert cut.split_sentences == 0 and cut.mid_sentence_ends == ()
    for scene, following in itertools.pairwise(cut.scenes):
        assert len(scene.text) <= 3000
        assert following.char_start in sentence_starts
        # It ends with a sentence's closing mark or at a paragraph end ("She went on:").
        assert (
            scene.text.rstrip()[-1] in '.!?”’"'
            or scene.text.endswith("\n\n")
            or scene.text.rstrip().endswith(";")
        )
        assert (
            not scene.text.rstrip().splitlines()[-1].startswith("Chapter")
        )  # a heading goes with its chapter
        # Greedy: the next scene's first sentence (with its chapter heading) would not have fitted.
        pieces = split_sentences(following.text)
        first = pieces[0] + pieces[1] if pieces[0].startswith("Chapter") else pieces[0]
        assert len(scene.text) + len(first) > 3000


def test_overlapped_text_takes_up_to_300_characters_of_each_neighbour() -> None:
    cut = pride_cut()
    scenes = cut.scenes
    ends = _ends(cut)
    for index, scene in enumerate(scenes):
        before = scenes[index - 1].text[-300:] if index > 0 else ""
        after = scenes[index + 1].text[:300] if index + 1 < len(scenes) else ""
        assert scene.overlapped == before + scene.text + after
        low = max(scenes[index - 1].char_start, scene.char_start - 300) if index > 0 else 0
        high = min(ends[index + 1], ends[index] + 300) if index + 1 < len(scenes) else ends[index]
        assert scene.overlapped == cut.narrative[low:high]
    assert len(scenes[5].overlapped) == len(scenes[5].text) + 600


def test_paper_scenes_are_twenty_thousand_characters() -> None:
    cut = cut_scenes(pride(), SceneSettings.paper())
    assert cut.settings.chars == 20000
    assert 34 <= len(cut.scenes) <= 40
    assert all(len(scene.text) <= 20000 for scene in cut.scenes)
    assert "".join(scene.text for scene in cut.scenes) == pride_cut().narrative


def test_overlong_sentences_are_cut_at_a_space_and_counted() -> None:
    book = replace(pride(), chapters=pride().chapters[:3])
    cut = cut_scenes(book, SceneSettings(chars=100, overlap=20))
    assert cut.split_sentences > 10 and cut.mid_sentence_ends
    assert "".join(scene.text for scene in cut.scenes) == cut.narrative
    assert all(len(scene.text) <= 100 for scene in cut.scenes)
    sentence_starts = set(itertools.accumulate(len(s) for s in split_sentences(cut.narrative)))
    for scene, following in itertools.pairwise(cut.scenes):
        if scene.index in cut.mid_sentence_ends:
            assert following.text.startswith(" ")  # cut before a space, as adjust_length does
        else:
            assert following.char_start in sentence_starts


def test_too_little_narrative_is_refused_with_the_count() -> None:
    book = replace(pride(), chapters=pride().chapters[:2])
    with pytest.raises(
        TooLittleNarrativeError, match=r"book 1342 .* 3 scene\(s\) of at most 3,000 characters, 10 needed"
    ):
        cut_scenes(book)
    assert len(cut_scenes(book, SceneSettings(min_scenes=3)).scenes) == 3


@pytest.mark.parametrize(
    ("heading", "matter"),
    [
        ("NOTES", True),
        ("GLOSSARY.", True),
        ("APPENDIX B", True),
        ("ORIGINAL TRANSCRIBER’S NOTES:", True),
        ("PREFACE", True),
        ("Author's Preface", True),
        ("Contents", True),
        ("FOOTNOTES", True),
        ("INDEX", True),
        ("I Introduction", False),  # The Time Machine's first chapter
        ("CHAPTER XIV A NOTE OF INVITATION", False),  # Twenty Thousand Leagues
        ("EPILOGUE", False),
        ("CHAPTER XI. INTRODUCING JIMMY", False),  # Pollyanna
        ("Chapter 12", False),
    ],
)
def test_matter_headings(heading: str, matter: bool) -> None:
    assert is_matter_heading(heading) is matter


@needs_shared
def test_ivanhoe_notes_and_footnotes_stay_out() -> None:
    book = read_book(gutenberg_book(82))
    last = book.chapters[-1].text
    assert (
        "NOTE TO CHAPTER I." in last and "[Footnote 1:" in last
    )  # the reader keeps them in the last chapter
    cut = cut_scenes(book)
    assert [(item.kind, item.chapter_index) for item in cut.left_out] == [
        ("back matter", len(book.chapters) - 1)
    ]
    assert cut.left_out[0].opening.startswith("NOTE TO CHAPTER I.") and cut.left_out[0].chars > 40000
    assert "".join(scene.text for scene in cut.scenes) == cut.narrative
    assert "NOTE TO CHAPTER" not in cut.narrative and "[Footnote" not in cut.narrative
    assert "FOOTNOTES" not in cut.narrative
    # The story itself runs to its last sentence.
    story_end = last[: last.index("NOTE TO CHAPTER I.")].rstrip()
    assert cut.narrative.endswith(story_end[-200:])


@needs_shared
def test_matter_chapters_and_bracketed_notes_are_listed() -> None:
    madding = read_book(gutenberg_book(107))  # Far from the Madding Crowd: two "[Footnote n: …]" paragraphs
    notes = Chapter(heading="NOTES", text=pride().chapters[0].text)
    book = replace(madding, chapters=(*madding.chapters, notes))
    cut = cut_scenes(book)
    kinds = [item.kind for item in cut.left_out]
    assert kinds.count("matter chapter") == 1 and kinds.count("footnote") >= 2
    matter = next(item for item in cut.left_out if item.kind == "matter chapter")
    assert matter.chapter_index == len(book.chapters) - 1 and matter.opening.startswith("NOTES It is a truth")
    assert "It is a truth universally acknowledged" not in cut.narrative
    assert re.search(r"\[Footnote", cut.narrative) is None
    assert "A queer Christian, like the Devil's head in a cowl, [1] as the" in cut.narrative
    assert max(scene.chapter_index or 0 for scene in cut.scenes) == len(madding.chapters) - 1
