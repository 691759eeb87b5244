"""Heading vocabulary: numbers in labels, and writing / reading numbers in every form."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from longread.documents.chapters.headings import (
    NUMBER_FORMS,
    NumberSpan,
    blank_emphasis,
    format_number,
    label_numbers,
    parse_label,
    parse_number,
)


def _numbers(heading: str) -> list[tuple[str, int, str]]:
    return [(heading[s.start : s.end], s.value, s.form) for s in label_numbers(heading)]


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("CHAPTER XII.", [("XII", 12, "roman-upper")]),
        ("9. Chapter 12", [("9", 9, "arabic"), ("12", 12, "arabic")]),
        ("XII.", [("XII", 12, "roman-upper")]),
        ("Chapter the First", [("First", 1, "ordinal-title")]),
        ("STAVE ONE", [("ONE", 1, "word-upper")]),
        ("LETTER 4", [("4", 4, "arabic")]),
        ("I. I AM BORN", [("I", 1, "roman-upper")]),
        ("CHAPTER IV. ONE DAY IN MAY", [("IV", 4, "roman-upper")]),
        ("CHAPTER I I SET OFF UPON MY JOURNEY", [("I", 1, "roman-upper")]),
        ("CHAPTER FORTY-SEVEN HARVEST TIME", [("FORTY-SEVEN", 47, "word-upper")]),
        ("Chapter III--THE HUNGER CRY", [("III", 3, "roman-upper")]),
        ("01 My Early Home", [("01", 1, "arabic")]),
        ("chapter xiv", [("xiv", 14, "roman-lower")]),
        ("  CHAPTER 3. The Spouter-Inn.", [("3", 3, "arabic")]),
        ("_CHAPTER XII_", [("XII", 12, "roman-upper")]),
        ("_I_", [("I", 1, "roman-upper")]),
        ("*II*.", [("II", 2, "roman-upper")]),
        ("=Part One=", [("One", 1, "word-title")]),
        ("  _9. Chapter 12_", [("9", 9, "arabic"), ("12", 12, "arabic")]),
        ("_Chapter IV. The Storm_", [("IV", 4, "roman-upper")]),
    ],
)
def test_label_numbers(heading: str, expected: list[tuple[str, int, str]]) -> None:
    assert _numbers(heading) == expected


@pytest.mark.parametrize(
    "heading", ["CHAPTER THE LAST", "EPILOGUE", "The Storm", "", "One day in May it rained"]
)
def test_label_numbers_none(heading: str) -> None:
    assert label_numbers(heading) == []


def test_number_span_offsets_point_into_the_heading() -> None:
    [span] = label_numbers("Chapter XLVII. THE WAY")
    assert span == NumberSpan(8, 13, 47, "roman-upper")


@pytest.mark.parametrize(
    ("value", "form", "text"),
    [
        (3, "roman-upper", "III"),
        (14, "roman-lower", "xiv"),
        (3, "word-title", "Three"),
        (47, "word-upper", "FORTY-SEVEN"),
        (1, "ordinal-title", "First"),
        (22, "ordinal-lower", "twenty-second"),
        (112, "word-lower", "one hundred and twelve"),
        (5, "arabic", "5"),
    ],
)
def test_format_number(value: int, form: str, text: str) -> None:
    assert format_number(value, form) == text
    assert parse_number(text) == (value, form)


@pytest.mark.parametrize("token", ["IIII", "VX", "hello", "0", "one one", "Mix", "", "twentyish"])
def test_parse_number_rejects_non_numbers(token: str) -> None:
    assert parse_number(token) is None


def test_format_number_rejects_unknown_form() -> None:
    with pytest.raises(ValueError, match="unknown number form"):
        format_number(3, "klingon")


@given(st.integers(min_value=1, max_value=200), st.sampled_from(NUMBER_FORMS))
def test_format_parse_round_trip(value: int, form: str) -> None:
    assert parse_number(format_number(value, form)) == (value, form)


def test_round_trip_every_value_and_form() -> None:
    for value in range(1, 201):
        for form in NUMBER_FORMS:
            assert parse_number(format_number(value, form)) == (value, form)


@given(st.text(max_size=60))
def test_parse_label_never_raises(line: str) -> None:
    label = parse_label(line.strip())
    if label is not None and label.number is not None:
        assert 0 <= label.number.start < label.number.end <= len(line.strip())


def test_parse_label_levels() -> None:
    assert parse_label("BOOK THE FIRST")
    assert parse_label("BOOK THE FIRST").kind == "part"  # type: ignore[union-attr]
    assert parse_label("First Epoch").kind == "part"  # type: ignore[union-attr]
    assert parse_label("PROLOGUE").kind == "special"  # type: ignore[union-attr]
    assert parse_label("Chapter 7").kind == "chapter"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("line", "unmarked"),
    [
        ("_CHAPTER I_", " CHAPTER I "),
        ("_Chapter IV. The Storm_.", " Chapter IV. The Storm ."),
        ("*II*", " II "),
        ("=BOOK ONE=", " BOOK ONE "),
        ("* * *", "* * *"),  # a rule of stars, not emphasis
        ("snake_case_name", "snake_case_name"),  # marks inside a word stay
        ("____", "____"),
    ],
)
def test_blank_emphasis_keeps_every_offset(line: str, unmarked: str) -> None:
    assert blank_emphasis(line) == unmarked
    assert len(blank_emphasis(line)) == len(line)


def test_emphasised_title_is_read_without_its_marks() -> None:
    label = parse_label("_Chapter IV. The Storm_")
    assert label is not None
    assert (label.kind, label.keyword, label.title) == ("chapter", "chapter", "The Storm")
    assert parse_label("* * *") is None
    assert parse_label("_To Mrs. Saville, England._") is None
