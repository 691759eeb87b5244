"""``BOOK.tagseparated_hierarch_sum`` (the authors' ``save_hierarch_summaries``), both ways.

The rule: TRUE_SUMMARY, FALSE_SUMMARY, LEVEL, rows in order; the string
``None`` for a missing false summary; nothing is stripped. The file keeps no
scene ranges: :func:`infer_scene_ranges` recovers them by replaying the
authors' grouping (:func:`group_for_next_level`) level by level.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from longread.benchmarks.narrativexl.official.layout import (
    HIERARCHICAL_HEADER,
    _data_rows,
    _join_rows,
    _parse_int,
    _row_error,
    _write_official,
    book_id_from_path,
    decode_official,
)
from longread.benchmarks.narrativexl.schema import HierarchicalSummary

HIERARCHY_GROUP_CHARS = 10000
"""``SummarizeSummariesDetailedEvents2``'s ``max_length``: how many characters of
``"Summary {i}: {text}\\n"`` lines are merged into one next-level summary."""
MISSING_FALSE_SUMMARY = "None"
"""What the authors write for a hierarchical summary without a false version."""


def group_for_next_level(summaries: Sequence[str], max_chars: int = HIERARCHY_GROUP_CHARS) -> list[list[int]]:
    """Which summaries the authors merge into each next-level summary.

    ``SummarizeSummariesDetailedEvents2`` writes ``"Summary {i}: {text}\\n"`` for
    each and joins consecutive lines while the group stays within ``max_chars``
    (``utils.BookProcessing.rechunk_book``; a group always takes at least one).
    """
    groups: list[list[int]] = []
    current: list[int] = []
    current_chars = 0
    for index, text in enumerate(summaries):
        line_chars = len(f"Summary {index}: {text}\n")
        if current_chars + line_chars <= max_chars or current_chars == 0:
            current.append(index)
            current_chars += line_chars
        else:
            groups.append(current)
            current, current_chars = [index], line_chars
    if current:
        groups.append(current)
    return groups


def infer_scene_ranges(items: Sequence[HierarchicalSummary]) -> list[HierarchicalSummary]:
    """Fill first/last scene by replaying the authors' grouping level by level.

    Level 0 summaries cover their own scene. A level's ranges are known when
    the previous level's are and the authors' grouping of the previous level
    gives exactly as many groups as this level has summaries; otherwise (a
    merge failed, or another grouping was used) they stay as they are.
    """
    by_level: dict[int, list[HierarchicalSummary]] = {}
    for item in items:
        by_level.setdefault(item.level, []).append(item)
    ranges: dict[tuple[int, int], tuple[int | None, int | None]] = {}
    for level in sorted(by_level):
        members = by_level[level]
        if level == 0:
            for item in members:
                ranges[(0, item.index)] = (item.index, item.index)
            continue
        below = by_level.get(level - 1)
        if not below:
            continue
        groups = group_for_next_level([item.true for item in below])
        if len(groups) != len(members):
            continue
        for item, group in zip(members, groups, strict=True):
            first = ranges.get((level - 1, below[group[0]].index), (None, None))[0]
            last = ranges.get((level - 1, below[group[-1]].index), (None, None))[1]
            if first is not None and last is not None:
                ranges[(level, item.index)] = (first, last)
    result = []
    for item in items:
        known = ranges.get((item.level, item.index))
        if known is None:
            result.append(item)
        else:
            result.append(item.model_copy(update={"first_scene": known[0], "last_scene": known[1]}))
    return result


def hierarchical_text(items: Sequence[HierarchicalSummary]) -> str:
    """The ``.tagseparated_hierarch_sum`` text as ``save_hierarch_summaries`` writes it, rows in order."""
    rows = [
        [item.true, MISSING_FALSE_SUMMARY if item.false is None else item.false, str(item.level)]
        for item in items
    ]
    return _join_rows(HIERARCHICAL_HEADER, rows)


def write_hierarchical(
    items: Sequence[HierarchicalSummary], path: str | Path, *, encoding: str = "utf-8"
) -> None:
    """Write ``BOOK.tagseparated_hierarch_sum`` exactly as the authors' ``save_hierarch_summaries`` does."""
    _write_official(path, hierarchical_text(items), encoding)


def read_hierarchical(path: str | Path, *, infer_ranges: bool = True) -> list[HierarchicalSummary]:
    """Read a ``.tagseparated_hierarch_sum`` file; ``None`` as FALSE_SUMMARY means no false version.

    ``index`` counts the rows of each level in file order; scene ranges are
    inferred with :func:`infer_scene_ranges` unless ``infer_ranges`` is False.
    """
    book_id = book_id_from_path(path)
    text = decode_official(path).text
    items: list[HierarchicalSummary] = []
    per_level: Counter[int] = Counter()
    for number, (true, false, level_text) in _data_rows(path, text, "hierarchical", book_id):
        level = _parse_int(path, book_id, number, "LEVEL", level_text)
        if level < 0:
            raise _row_error(path, book_id, number, f"LEVEL is {level}; levels start at 0")
        items.append(
            HierarchicalSummary(
                level=level,
                index=per_level[level],
                true=true,
                false=None if false == MISSING_FALSE_SUMMARY else false,
            )
        )
        per_level[level] += 1
    return infer_scene_ranges(items) if infer_ranges else items
