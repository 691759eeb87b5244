from __future__ import annotations

import pytest

from longread.benchmarks.chapterbreak.numbering import heading_label, label_values, rewrite_heading_numbers


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
