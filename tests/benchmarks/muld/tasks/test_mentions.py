"""Character mentions for the archetype baseline: a real novel (Pride and Prejudice) and a
screenplay-format sample (the project has no real scripts; speaker cues are the case that matters)."""

from __future__ import annotations

import functools
import re

import pytest

from longread.benchmarks.muld.tasks.chunks import token_chunks
from longread.benchmarks.muld.tasks.mentions import NO_MENTION_NOTE, find_mentions, mention_chunks, name_forms
from longread.files import read_text
from longread.text.tokenizers import NamedTokenizer, load_tokenizer
from tests.helpers import gutenberg_book, needs_shared

SCREENPLAY = """\
INT. HOGWARTS CORRIDOR - NIGHT

Harry creeps past the portraits. A door creaks.

                    HARRY
          Who's there?

                    HERMIONE (O.S.)
          It's me. Harrying me won't help, Harry Potter.

Hermione steps out with a wand. She will not wait for Ron.

                    HARRY (CONT'D)
          Where's Ron?

A rose lies on the floor.
"""


@functools.cache
def pride_and_prejudice() -> str:
    return read_text(gutenberg_book(1342))


@pytest.fixture(scope="module")
def gpt2() -> NamedTokenizer:
    return load_tokenizer("gpt2")


@pytest.mark.parametrize(
    ("character", "forms"),
    [
        ("Harry Potter", ("Harry Potter", "Harry")),
        ("HARRY", ("HARRY",)),
        ("Mr. Darcy", ("Mr. Darcy", "Darcy")),
        ("Captain  Jack Sparrow", ("Captain Jack Sparrow", "Jack Sparrow", "Jack")),
        ("Q", ()),
    ],
)
def test_name_forms(character: str, forms: tuple[str, ...]) -> None:
    assert name_forms(character) == forms


def test_surnames_only_when_asked() -> None:
    assert name_forms("Elizabeth Bennet", surname=True) == ("Elizabeth Bennet", "Elizabeth", "Bennet")


def test_speaker_cues_in_capitals_and_names_in_prose_are_both_found() -> None:
    full = [m.text for m in find_mentions(SCREENPLAY, "Harry Potter")]
    assert full == ["Harry", "HARRY", "Harry Potter", "HARRY"]  # "Harry Potter" once, not twice
    starts = [m.start for m in find_mentions(SCREENPLAY, "Harry Potter")]
    for character in ("HARRY", "harry", "Harry"):
        assert [m.start for m in find_mentions(SCREENPLAY, character)] == starts, character
    # Lower-case common words are never names: "Rose" is not "rose", "Will" not "will".
    assert find_mentions(SCREENPLAY, "Rose") == []
    assert find_mentions(SCREENPLAY, "Will") == []
    assert [m.text for m in find_mentions(SCREENPLAY, "Ron Weasley")] == ["Ron", "Ron"]


@needs_shared
def test_first_last_and_most_mentioned_chunks_in_a_novel(gpt2: NamedTokenizer) -> None:
    book = pride_and_prejudice()
    selection = mention_chunks(book, "Mr. Wickham", tokenizer=gpt2, chunk_tokens=400)
    chunks = token_chunks(book, gpt2, 400)
    counts = [len(re.findall(r"(?<!\w)(?:WICKHAM|Wickham)(?!\w)", chunk.text)) for chunk in chunks]
    first = next(i for i, c in enumerate(counts) if c)
    last = max(i for i, c in enumerate(counts) if c)
    most = counts.index(max(counts))
    assert len({first, last, most}) == 3
    assert [span.index for span in selection.kept] == sorted({first, last, most})
    labels = {span.index: span.label for span in selection.kept}
    assert (labels[first], labels[most], labels[last]) == ("first", "most-mentions", "last")
    assert {span.index: span.score for span in selection.kept}[most] == max(counts)
    assert selection.settings["mentions"] == sum(counts)
    assert selection.kept_tokens <= 3 * 400


@needs_shared
def test_roles_sharing_a_chunk_are_kept_once(gpt2: NamedTokenizer) -> None:
    book = pride_and_prejudice()[:200_000]
    selection = mention_chunks(book, "Mr. Wickham", tokenizer=gpt2, chunk_tokens=100_000)
    assert [span.label for span in selection.kept] in (
        ["first+most-mentions+last"],
        ["first+most-mentions", "last"],
    )


def test_no_mention_is_a_recorded_result_not_an_error(gpt2: NamedTokenizer) -> None:
    selection = mention_chunks(SCREENPLAY, "Draco Malfoy", tokenizer=gpt2, chunk_tokens=50)
    assert selection.kept == () and selection.n_units > 1
    assert selection.notes[0].startswith(f"{NO_MENTION_NOTE} 'Draco Malfoy'")
    assert selection.settings["mentions"] == 0
    with pytest.raises(ValueError, match="character name is empty"):
        mention_chunks(SCREENPLAY, " ", tokenizer=gpt2, chunk_tokens=50)
