"""NarrativeXL test books made from real Gutenberg novels without a model.

A book's narrative (from 30,000 characters in, past the front matter) is cut at
sentence ends into scenes of at most ~3,000 characters; a scene's "summary" is
its first two sentences, and its "distorted" summaries are that summary with
the word order reversed and rotated (one per rotation), as many as the authors
ask for (``max(1, 5 - scene)``). Overlapped texts take 300 characters of each
neighbour, as the authors' ``create_chunk_summaries`` does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from longread.benchmarks.narrativexl.schema import BookSummaries, Scene, SceneSummaries
from longread.files import read_text
from tests.helpers import gutenberg_book

SCENE_CHARS = 3000
OVERLAP = 300
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# Gutenberg novels used as the main book and as the "other books".
MAIN_BOOK = 84  # Frankenstein
OTHER_BOOKS = (98, 345, 1400, 2701, 105, 1023)


def _sentences(text: str) -> list[str]:
    return [s for s in (" ".join(part.split()) for part in _SENTENCE_END.split(text)) if s]


def scene_texts(
    gutenberg_id: int, n_scenes: int, *, start: int = 30000, chars: int = SCENE_CHARS
) -> list[str]:
    """``n_scenes`` pieces of the novel, each whole sentences of at most ~``chars`` characters."""
    text = read_text(gutenberg_book(gutenberg_id))
    sentences = _sentences(text[start : start + (n_scenes + 2) * chars])[1:]  # the first may be cut
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for sentence in sentences:
        if current and size + len(sentence) + 1 > chars:
            pieces.append(" ".join(current))
            current, size = [], 0
            if len(pieces) == n_scenes:
                break
        current.append(sentence)
        size += len(sentence) + 1
    assert len(pieces) == n_scenes, f"pg{gutenberg_id}: only {len(pieces)} scenes"
    return pieces


def distorted_variants(summary: str, count: int) -> tuple[str, ...]:
    """``count`` different "distorted" summaries: the words reversed, rotated by 1, 2, … places."""
    words = summary.split()
    variants = []
    for k in range(count):
        shift = (k + 1) % len(words)
        variants.append(" ".join(reversed(words[shift:] + words[:shift])))
    return tuple(variants)


def make_book(
    gutenberg_id: int,
    n_scenes: int,
    *,
    fail: Sequence[int] = (),
    warning: Sequence[int] = (),
    book_id: str | None = None,
    scene_chars: int = SCENE_CHARS,
) -> BookSummaries:
    """A BookSummaries in the form its ``.tagseparated`` file keeps (see ``official.canonical_book``)."""
    texts = scene_texts(gutenberg_id, n_scenes, chars=scene_chars)
    scenes: list[Scene] = []
    summaries: list[SceneSummaries] = []
    offset = 0
    for index, text in enumerate(texts):
        overlapped = text
        if index > 0:
            overlapped = texts[index - 1][-OVERLAP:] + overlapped
        if index < len(texts) - 1:
            overlapped = overlapped + texts[index + 1][:OVERLAP]
        scenes.append(Scene(index=index, text=text, overlapped=overlapped.strip(), char_start=offset))
        offset += len(text) + 1
        if index in fail:
            summaries.append(
                SceneSummaries(index=index, summary=None, status="Fail", comment="Complete failure.")
            )
            continue
        summary = " ".join(_sentences(text)[:2])
        distorted = distorted_variants(summary, max(1, 5 - index))
        if index in warning:
            summaries.append(
                SceneSummaries(
                    index=index,
                    summary=summary,
                    distorted=distorted,
                    status="Warning",
                    comment="Summary may be incomplete.",
                )
            )
        else:
            summaries.append(SceneSummaries(index=index, summary=summary, distorted=distorted))
    return BookSummaries(
        book_id=book_id or str(gutenberg_id), scenes=tuple(scenes), summaries=tuple(summaries)
    )


def main_book() -> BookSummaries:
    """Frankenstein, 40 scenes; scenes 7 and 23 failed, scene 12 has a warning."""
    return make_book(MAIN_BOOK, 40, fail=(7, 23), warning=(12,))


def other_books() -> list[BookSummaries]:
    """Six other novels, 12 scenes each; scene 5 of the first failed."""
    return [make_book(g, 12, fail=(5,) if g == OTHER_BOOKS[0] else ()) for g in OTHER_BOOKS]


def fake_merge(lines: str) -> str:
    """A stand-in for the authors' merging model: the group's scene numbers and first words.

    ``lines`` is a group of ``"Summary {i}: {text}\\n"`` lines as the authors give them to GPT.
    """
    numbers = re.findall(r"^Summary (\d+): ", lines, flags=re.MULTILINE)
    return f"Events of summaries {numbers[0]}-{numbers[-1]}: {lines[:120].splitlines()[0]}"


def hierarchy_book() -> BookSummaries:
    """Great Expectations, 45 scenes, none failed (the authors' hierarchical saver cannot write a None)."""
    return make_book(1400, 45)
