"""The used-context search on measured differences: which K it runs, in which order, and where it stops."""

from __future__ import annotations

import pytest

from longread.horizon.campaign import kept_context
from longread.horizon.plan import keep_grid
from longread.horizon.search import search_keep
from longread.metrics.paired import PairedScores, paired_scores

BOOKS = [f"book{i % 10}" for i in range(100)]


def answers(lost: int) -> PairedScores:
    """100 paired instances of 10 books, 40 right intact; ``lost`` of them wrong under the control."""
    intact = [i < 40 for i in range(100)]
    controlled = [i < 40 - lost for i in range(100)]
    return paired_scores(intact, controlled, clusters=BOOKS)


def test_the_grid_halves_down_to_the_smallest_k_then_zero() -> None:
    assert keep_grid(2048, 32) == (1024, 512, 256, 128, 64, 32, 0)
    assert keep_grid(192, 32) == (96, 48, 0)


def test_descends_while_null_then_bisects_between_the_last_null_and_the_first_use() -> None:
    # the model uses its last 200 tokens: keeping fewer loses 30 answers, keeping 200 or more loses none
    tried: list[int] = []

    def measure(keep: int) -> PairedScores:
        tried.append(keep)
        return answers(0 if keep >= 200 else 30)

    steps = search_keep(measure, 2048, keep_grid(2048, 32), refine=3, step=16)
    assert tried == [1024, 512, 256, 128, 192, 224, 208]  # the grid to the first use, then bisection
    assert [s.null for s in steps] == [True, True, True, True, True, False, False]
    assert kept_context(steps, 2048) == 208  # 200 rounded up to the 16-token steps the bisection took


def test_a_first_k_that_is_not_a_null_is_bisected_against_the_whole_prefix() -> None:
    steps = search_keep(lambda keep: answers(30), 1024, keep_grid(1024, 32), refine=2, step=16)
    assert [s.keep for s in steps] == [896, 768, 512]  # 512 lost → (512+1024)/2, then (768+1024)/2
    assert kept_context(steps, 1024) == 1024  # nothing kept the answers


def test_a_model_that_ignores_its_prefix_is_searched_down_to_zero_and_not_refined() -> None:
    steps = search_keep(lambda keep: answers(0), 512, keep_grid(512, 32), refine=2, step=16)
    assert [s.keep for s in steps] == [256, 128, 64, 32, 0]
    assert kept_context(steps, 512) == 0


def test_a_k_that_is_neither_use_nor_null_stops_the_descent_as_use_does() -> None:
    undecided = answers(5)  # 5 of 5 changed answers one way: the interval excludes 0, McNemar's p is 0.0625
    assert undecided.ci_high < 0 and undecided.p is not None and undecided.p > 0.05
    steps = search_keep(
        lambda keep: answers(0) if keep >= 256 else undecided, 1024, keep_grid(1024, 32), refine=0, step=16
    )
    assert [s.keep for s in steps] == [512, 256, 128]
    assert [s.null for s in steps] == [True, True, False]
    assert kept_context(steps, 1024) == 256


def test_zero_first_stops_at_a_null_at_zero_and_otherwise_searches_as_the_descent_does() -> None:
    tried: list[int] = []

    def ignores(keep: int) -> PairedScores:
        tried.append(keep)
        return answers(0)

    steps = search_keep(ignores, 2048, keep_grid(2048, 32), refine=3, step=16, zero_first=True)
    assert tried == [0] and [s.keep for s in steps] == [0] and kept_context(steps, 2048) == 0

    def uses_last_200(keep: int) -> PairedScores:
        tried.append(keep)
        return answers(0 if keep >= 200 else 30)

    tried.clear()
    first = search_keep(uses_last_200, 2048, keep_grid(2048, 32), refine=3, step=16, zero_first=True)
    assert tried == [0, 1024, 512, 256, 128, 192, 224, 208]  # K = 0, then the descent's own order
    descended = search_keep(uses_last_200, 2048, keep_grid(2048, 32), refine=3, step=16)
    assert kept_context(first, 2048) == kept_context(descended, 2048) == 208
    assert [s.keep for s in first] == [1024, 512, 256, 224, 208, 192, 128, 0]  # one K more: 0

    def uses_last_32(keep: int) -> PairedScores:
        tried.append(keep)
        return answers(0 if keep >= 32 else 30)

    tried.clear()  # the descent reaches K = 0 itself: it reuses the first run, then bisects (16 steps)
    search_keep(uses_last_32, 512, keep_grid(512, 32), refine=2, step=16, zero_first=True)
    assert tried == [0, 256, 128, 64, 32, 16]


def test_zero_first_where_k0_and_the_first_grid_k_are_not_nulls_bisects_against_the_whole_prefix() -> None:
    steps = search_keep(lambda keep: answers(30), 1024, keep_grid(1024, 32), 2, 16, zero_first=True)
    assert [s.keep for s in steps] == [896, 768, 512, 0]  # K = 0, then the descent's own bisection against L
    assert kept_context(steps, 1024) == 1024
    with pytest.raises(ValueError, match="needs 0 on its grid"):
        search_keep(lambda keep: answers(0), 1024, (512, 256), 2, 16, zero_first=True)
