from __future__ import annotations

import pytest

from longread.benchmarks.chapterbreak.numbering import (
    conform_heading,
    heading_label,
    label_values,
    recase_title,
    rewrite_heading_numbers,
    title_case_of,
)


@pytest.mark.parametrize(
    ("negative", "gold", "expected"),
    [
        ("CHAPTER XVII. The Storm", "CHAPTER III.", "CHAPTER III. The Storm"),
        ("CHAPTER XVII.", "CHAPTER III. A Ball", "CHAPTER III."),
        ("Chapter 17", "Chapter 3", "Chapter 3"),
        ("CHAPTER SEVENTEEN", "CHAPTER THREE", "CHAPTER THREE"),
        ("9. Chapter 12", "10. Chapter 13", "10. Chapter 13"),
        ("XII. THE STORM", "III. ONE DAY IN MAY", "III. THE STORM"),
        ("Chapter the Twelfth", "Chapter the Third", "Chapter the Third"),
        ("STAVE FOUR.", "STAVE TWO.", "STAVE TWO."),
        ("Letter 4", "Letter 2", "Letter 2"),
    ],
)
def test_negative_headings_take_the_gold_number_and_keep_their_title(
    negative: str, gold: str, expected: str
) -> None:
    assert rewrite_heading_numbers(negative, gold) == expected
    assert label_values(rewrite_heading_numbers(negative, gold)) == label_values(gold)


def test_title_numbers_are_not_label_numbers() -> None:
    # "ONE DAY" is the chapter's own title; only IV is its number.
    assert (
        rewrite_heading_numbers("CHAPTER IV. ONE DAY IN MAY", "CHAPTER II.") == "CHAPTER II. ONE DAY IN MAY"
    )
    assert heading_label("CHAPTER IV. ONE DAY IN MAY") == "CHAPTER IV"


def test_unnumbered_headings_are_left_alone() -> None:
    assert rewrite_heading_numbers("EPILOGUE", "CHAPTER II.") == "EPILOGUE"
    assert heading_label("EPILOGUE") is None


@pytest.mark.parametrize(
    ("negative", "gold", "expected"),
    [
        # the gold has no title: every candidate carries exactly the gold's heading
        ("CHAPTER II. THE WOOL KING.", "II", "II"),
        ("CHAPTER XVII. The Storm", "CHAPTER III.", "CHAPTER III."),
        ("Letter 4 _To Mrs. Saville_", "EPILOGUE", "EPILOGUE"),
        # the gold has a title: the negative's own title, in the gold's case and punctuation
        ("CHAPTER II. THE WOOL KING.", "II. The Storm", "II. The Wool King"),
        (
            "2--Humanity Appears upon the Scene",
            "CHAPTER II—THE CAPTAIN",
            "CHAPTER II—HUMANITY APPEARS UPON THE SCENE",
        ),
        (
            "XII. THE P.C. AND P.O.",
            "Chapter 2. The Curse of the Baskervilles.",
            "Chapter 2. The P.C. and P.O.",
        ),
        (
            "CHAPTER 9 Mr. Tulliver Declares His Resolution",
            "CHAPTER II. Matthew Cuthbert is surprised",
            "CHAPTER II. Mr. tulliver declares his resolution",
        ),
        ("The Storm at sea", "Chapter 2. The Curse", "Chapter 2. The Storm at Sea"),
        # cannot take the gold's form: no title to keep, a title that reads as part of the label
        ("Chapter 7", "CHAPTER XII. A TALE.", None),
        ("CHAPTER 3 ONE NIGHT", "CHAPTER EIGHTEEN DARK DAYS", None),
        ("CHAPTER 3 Storm", "CHAPTER II. Matthew Cuthbert is surprised", None),
    ],
)
def test_headings_take_the_gold_form(negative: str, gold: str, expected: str | None) -> None:
    assert conform_heading(negative, gold) == expected


@pytest.mark.parametrize(
    ("title", "case"),
    [
        ("THE STORM", "upper"),
        ("the storm", "lower"),
        ("The Council with the Munchkins", "title"),
        ("Matthew Cuthbert is surprised", "sentence"),
        ("1885", "none"),
    ],
)
def test_title_case_is_recognised_and_written(title: str, case: str) -> None:
    assert title_case_of(title) == case
    for target in ("upper", "lower", "title"):
        assert title_case_of(recase_title("the wool king of the north", target)) == target  # type: ignore[arg-type]
