"""Out-of-book negatives take the gold book's typography; cause/dialogue are capped per book by default."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from longread.benchmarks.chapterbreak.build import (
    DEFAULT_MAX_PER_BOOK,
    BuildOptions,
    build_book,
    pool_entries,
)
from longread.benchmarks.chapterbreak.leaks import typography_marks, typography_scores
from longread.benchmarks.chapterbreak.typography import Typography, rewrite
from longread.cli.app import app
from longread.documents.book import Book, Chapter
from tests.helpers import synthetic_book

CURLY = Typography("curly", "curly", "—", False, "double")
STRAIGHT = Typography("straight", "straight", "--", True, "double")
SINGLE = Typography("curly", "curly", "—", False, "single")


def test_style_is_learnt_by_majority() -> None:
    text = "“Yes,” she said—“it’s _mine_.” " * 50 + '"No," he said.'
    assert Typography.of(text) == Typography("curly", "curly", "—", True, "double")
    plain = "'Come here,' she said--'now.' He didn't. " * 20
    style = Typography.of(plain)
    assert (style.double_quotes, style.single_quotes, style.dashes, style.italics, style.dialogue) == (
        None,
        "straight",
        "--",
        False,
        "single",
    )
    # a stray underscore in a long text does not make a book one with italics
    assert not Typography.of("word " * 10_000 + "_x_").italics


@pytest.mark.parametrize(
    ("text", "style", "source", "expected", "changes"),
    [
        (
            '"I don\'t know," he said--"\'Tis _so_."',
            CURLY,
            STRAIGHT,
            "“I don’t know,” he said—“’Tis so.”",
            [
                "double quotes straight→curly",
                "single quotes straight→curly",
                "dashes --→—",
                "italics _ removed",
            ],
        ),
        (
            "“It’s—so,” ‘he’ said——and _left_.",
            STRAIGHT,
            CURLY,
            "\"It's--so,\" 'he' said----and _left_.",
            ["double quotes curly→straight", "single quotes curly→straight", "dashes —→--"],
        ),
        (
            "‘I don’t know,’ he said, ‘the boys’ books say “no.”’",
            CURLY,
            SINGLE,
            "“I don’t know,” he said, “the boys’ books say ‘no.’”",
            ["dialogue quotes single→double"],
        ),
        (
            "“I don’t know,” he said, “she said ‘no’ to me.”",
            SINGLE,
            CURLY,
            "‘I don’t know,’ he said, ‘she said “no” to me.’",
            ["dialogue quotes double→single"],
        ),
        ("“It’s—so,” he said.", CURLY, CURLY, "“It’s—so,” he said.", []),
    ],
)
def test_rewrite_into_a_style(
    text: str, style: Typography, source: Typography, expected: str, changes: list[str]
) -> None:
    rewritten = rewrite(text, style, source)
    assert rewritten.text == expected
    assert sorted(rewritten.changes()) == sorted(changes)
    # the whole rewrite covers the whole original; a cut covers at most as much, monotonically
    assert rewritten.original_length(len(rewritten.text)) == len(text)
    covered = [rewritten.original_length(k) for k in range(len(rewritten.text) + 1)]
    assert covered == sorted(covered) and covered[0] == 0


def test_changes_are_counted_only_in_the_kept_text() -> None:
    rewritten = rewrite("plain words first, then a dash--here", CURLY, STRAIGHT)
    assert rewritten.changes(10) == set()
    assert rewritten.changes() == {"dashes --→—"}


def _book(book_id: str, line: str) -> Book:
    # The marks open every chapter (so candidates carry them) and close it (so prefixes do).
    base = synthetic_book(12, book_id=book_id)
    lines = "\n\n".join([line] * 40)
    chapters = tuple(
        Chapter(heading=c.heading, text=f"{lines}\n\n{c.text}\n\n{lines}") for c in base.chapters
    )
    return Book(**{**base.__dict__, "chapters": chapters})


def test_out_of_book_negatives_are_rewritten_into_the_gold_books_typography() -> None:
    gold_book = _book("straight", '"Come here," she said--"it\'s _late_."')
    other = _book("curly", "“Come here,” she said—“it’s late.”")
    for negatives_from_curly in (True, False):
        options = BuildOptions(prefix_tokens=256, negatives_from="out-of-book", conform_typography=True)
        if not negatives_from_curly:
            options = BuildOptions(prefix_tokens=256, negatives_from="out-of-book", conform_typography=False)
        built = build_book(gold_book, options, out_of_book_pool=pool_entries(other, options))
        assert built.instances
        for instance in built.instances:
            assert instance.negative_sources is not None
            marks = set().union(*(typography_marks(n) for n in instance.negatives))
            if negatives_from_curly:
                assert marks <= {'"', "'", "--"}, marks
                assert all(
                    s.typography is not None and "double quotes curly→straight" in s.typography
                    for s in instance.negative_sources
                )
                # windows are measured in the other book's own text
                for source, text in zip(instance.negative_sources, instance.negatives, strict=True):
                    assert source.char_length is not None and abs(source.char_length - len(text)) <= 30
            else:
                assert "“" in marks and all(s.typography is None for s in instance.negative_sources)
                scores = typography_scores(instance)
                assert scores[0] > max(scores[1:])  # left alone, the gold stands out by its marks


def test_in_book_candidates_are_left_as_written() -> None:
    book = _book("curly", "“Come here,” she said—“it’s late.”")
    for instance in build_book(book, BuildOptions(prefix_tokens=256)).instances:
        assert instance.negative_sources is not None
        assert all(s.typography is None for s in instance.negative_sources)


def _dense_dialogue_book() -> Book:
    base = synthetic_book(3)
    lines = "\n\n".join(f'"Come {k}," she said.' for k in range(400))
    chapters = list(base.chapters)
    chapters[1] = Chapter(heading=chapters[1].heading, text=chapters[1].text + "\n\n" + lines)
    return Book(**{**base.__dict__, "chapters": tuple(chapters)})


def test_cause_and_dialogue_are_capped_per_book_by_default() -> None:
    assert BuildOptions(suffix_type="dialogue").per_book_cap == DEFAULT_MAX_PER_BOOK
    assert BuildOptions(suffix_type="cause", max_per_book=7).per_book_cap == 7
    assert BuildOptions(suffix_type="cause", max_per_book=0).per_book_cap is None
    assert BuildOptions(suffix_type="chapter", max_per_book=7).per_book_cap is None
    book = _dense_dialogue_book()
    capped = build_book(book, BuildOptions(prefix_tokens=256, suffix_type="dialogue"))
    uncapped = build_book(book, BuildOptions(prefix_tokens=256, suffix_type="dialogue", max_per_book=0))
    assert 0 < len(capped.instances) <= DEFAULT_MAX_PER_BOOK < len(uncapped.instances)


def test_cli_help_states_the_default_cap() -> None:
    result = CliRunner().invoke(app, ["build", "chapterbreak", "--help"], terminal_width=200)
    assert result.exit_code == 0
    help_text = re.sub(r"[\s│]+", " ", result.output)
    assert f"default {DEFAULT_MAX_PER_BOOK}, 0 = no cap" in help_text


def test_dialogue_negatives_open_with_the_gold_books_quote() -> None:
    # The other book opens dialogue with single quotes; its nested double quotes, rewritten into a
    # double-quote book, become single ones and so cannot open a negative there.
    gold_book = _book("double", "“Come here,” she said. “It is late.”")
    other = _book("single", "‘Come here,’ she said. ‘It is late.’\n\n“Nested,” he said.")
    options = BuildOptions(prefix_tokens=256, suffix_type="dialogue", negatives_from="out-of-book")
    built = build_book(gold_book, options, out_of_book_pool=pool_entries(other, options))
    assert built.instances
    for instance in built.instances:
        assert all(c.startswith("“") for c in instance.candidates), [c[:12] for c in instance.candidates]
        assert instance.negative_sources is not None
        assert all(s.typography == "dialogue quotes single→double" for s in instance.negative_sources)
