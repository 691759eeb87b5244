"""Which instances a run evaluates: all, the first N, or a seeded sample stratified by book."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

SAMPLING_RULE = (
    "stratified by book: books are visited in a seeded random order, round-robin, each giving its next "
    "instance from a seeded shuffle, until N are chosen (no book dominates a small sample); the chosen "
    "instances keep the data file's order"
)


def stratified_sample(items: Sequence[T], n: int, group_of: Callable[[T], str], seed: int) -> list[T]:
    """``n`` items spread as evenly as possible over groups; the same seed gives the same items.

    Each group's items are shuffled with the seed, groups are visited in a seeded
    order round-robin, and the chosen items are returned in their input order.
    """
    if n >= len(items):
        return list(items)
    rng = random.Random(f"longread/sample/{seed}")
    by_group: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        by_group.setdefault(group_of(item), []).append(index)
    queues = []
    for group in sorted(by_group):
        indices = by_group[group][:]
        rng.shuffle(indices)
        queues.append(indices)
    rng.shuffle(queues)
    chosen: list[int] = []
    depth = 0
    while len(chosen) < n:
        for queue in queues:
            if depth < len(queue):
                chosen.append(queue[depth])
                if len(chosen) == n:
                    break
        depth += 1
    return [items[index] for index in sorted(chosen)]


def select(
    items: Sequence[T],
    *,
    limit: int | None,
    sample: int | None,
    seed: int,
    group_of: Callable[[T], str],
) -> list[T]:
    """``sample`` first (stratified), then ``limit`` (the first N of what is left)."""
    chosen = list(items)
    if sample is not None:
        chosen = stratified_sample(chosen, sample, group_of, seed)
    if limit is not None:
        chosen = chosen[:limit]
    return chosen
