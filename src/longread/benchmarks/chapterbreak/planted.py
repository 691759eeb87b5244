"""Planted copies: the known positive a calibration needs (``longread calibrate``).

A verbatim copy of the gold continuation's first ``copy_tokens`` tokens (the model's tokenizer) is put
into the prefix so that it starts ``distance`` tokens before the prefix's end, at a sentence boundary
(seeded among the boundaries from ``distance`` to ``distance + SLACK`` tokens; where none lies there,
between two words at the distance, recorded as ``at_sentence: false``), so every copy starts between
``distance`` and ``distance + SLACK`` tokens before the end. The copy is followed by
the whitespace that followed the sentence it comes after, so it reads as a sentence or paragraph of its
own. The prefix then loses as many tokens at its start as the copy added, so its token length stays;
everything else of the instance is unchanged. The instance's id gains ``#planted-dD`` and its
``planted`` record says where the copy is (:class:`~longread.benchmarks.chapterbreak.schema.Planted`).

A model that copies from its context now prefers the gold; a context control that perturbs the copy
(keeps fewer than ``distance − copy`` tokens) must remove that preference, one that keeps ``distance``
tokens or more must not.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Sequence

from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance, Planted
from longread.errors import LongreadError

COPY_TOKENS = 64
SLACK = 64
"""A boundary up to this many tokens farther than the distance asked for may take the copy."""
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*(\s+)")
_WORD_GAP = re.compile(r"\s+")

Count = Callable[[str], int]
"""Tokens of a text in the model's tokenizer (no start token)."""


class PlantError(LongreadError):
    """A copy that cannot be planted: names the instance and what to change."""


def plant_copies(
    instances: Sequence[ChapterBreakInstance],
    distances: Sequence[int],
    count: Count,
    *,
    copy_tokens: int = COPY_TOKENS,
    seed: int = 0,
) -> list[ChapterBreakInstance]:
    """Every instance planted at every distance (instance-major order); every refusal is checked first,
    so a bad setting stops before anything is planted."""
    check_plantable(instances, distances, count, copy_tokens)
    return [plant_copy(i, d, count, copy_tokens=copy_tokens, seed=seed) for i in instances for d in distances]


def check_plantable(
    instances: Sequence[ChapterBreakInstance], distances: Sequence[int], count: Count, copy_tokens: int
) -> None:
    """Refuse (naming the instance) a distance the prefix cannot hold or a gold shorter than the copy."""
    if copy_tokens < 1:
        raise PlantError(f"the copy needs at least 1 token, got {copy_tokens}")
    if not distances or min(distances) <= copy_tokens:
        raise PlantError(
            f"each distance must exceed the copy's {copy_tokens} tokens (the copy ends before the prefix "
            f"does); got {list(distances)}"
        )
    for instance in instances:
        if instance.planted is not None:
            raise PlantError(f"{instance.id}: already planted; plant the unplanted data")
        gold = count(instance.gold)
        if gold < copy_tokens:
            raise PlantError(
                f"{instance.id}: its gold continuation has {gold} tokens, fewer than the {copy_tokens} to "
                "copy; give --copy-tokens a smaller number or leave the instance out"
            )
        prefix = count(instance.prefix)
        room = prefix - copy_tokens - SLACK
        if max(distances) >= room:
            raise PlantError(
                f"{instance.id}: distance {max(distances)} does not fit its prefix of {prefix} tokens "
                f"(at most {room - 1}: the prefix loses the copy's {copy_tokens} tokens at its start, and a "
                f"boundary may lie {SLACK} tokens farther); use smaller --distances or data built with "
                "longer prefixes"
            )


def plant_copy(
    instance: ChapterBreakInstance,
    distance: int,
    count: Count,
    *,
    copy_tokens: int = COPY_TOKENS,
    seed: int = 0,
) -> ChapterBreakInstance:
    """``instance`` with the gold's first ``copy_tokens`` tokens planted ``distance`` tokens before the
    prefix's end (see the module docstring)."""
    check_plantable([instance], [distance], count, copy_tokens)
    copy = _copy_of(instance.gold, count, copy_tokens)
    prefix = instance.prefix
    before = count(prefix)
    rng = random.Random(
        int.from_bytes(hashlib.sha256(f"{seed}\0{instance.id}\0{distance}".encode()).digest()[:8])
    )
    # the copy's own tokens lie between its start and the text that followed the boundary
    at, gap, at_sentence = _place(prefix, distance - count(copy), count, rng)
    planted = prefix[:at] + copy + gap + prefix[at:]
    cut = _cut_to(planted, before, count, limit=at)
    final = planted[cut:]
    record = Planted(
        distance=distance,
        distance_tokens=count(final[at - cut :]),
        copy_tokens=count(copy),
        copy_chars=len(copy),
        at_char=at - cut,
        at_sentence=at_sentence,
        cut_chars=cut,
        original_id=instance.id,
        seed=seed,
    )
    start = None if instance.prefix_start_char is None else instance.prefix_start_char + cut
    return instance.model_copy(
        update={
            "id": f"{instance.id}#planted-d{distance}",
            "prefix": final,
            "prefix_tokens": count(final),
            "prefix_start_char": start,
            "planted": record,
        }
    )


def _copy_of(gold: str, count: Count, tokens: int) -> str:
    """The longest opening of ``gold`` (whole characters, verbatim) of at most ``tokens`` tokens."""
    low, high = 1, len(gold)
    while low < high:  # the largest c with count(gold[:c]) <= tokens
        middle = (low + high + 1) // 2
        if count(gold[:middle]) <= tokens:
            low = middle
        else:
            high = middle - 1
    return gold[:low].rstrip()


def _tail_tokens(prefix: str, count: Count) -> Callable[[int], int]:
    cache: dict[int, int] = {}

    def tail(at: int) -> int:
        if at not in cache:
            cache[at] = count(prefix[at:])
        return cache[at]

    return tail


def _place(prefix: str, distance: int, count: Count, rng: random.Random) -> tuple[int, str, bool]:
    """(offset, the whitespace to put after the copy, at a sentence boundary?): a place with at least
    ``distance`` tokens of the prefix after it."""
    tail = _tail_tokens(prefix, count)
    ends = [(m.end(), m.group(1)) for m in _SENTENCE_END.finditer(prefix)]
    # tail(offset) falls as the offset grows: the first boundary whose tail is below the distance
    first_short = _first(len(ends), lambda k: tail(ends[k][0]) < distance)
    near = []
    for k in range(first_short - 1, -1, -1):
        if tail(ends[k][0]) > distance + SLACK:
            break
        near.append(ends[k])
    if near:
        offset, gap = rng.choice(sorted(near))
        return offset, gap, True
    gaps = [(m.end(), m.group(0)) for m in _WORD_GAP.finditer(prefix)]
    k = _first(len(gaps), lambda j: tail(gaps[j][0]) < distance)
    if k == 0:
        raise PlantError(f"no place {distance} tokens before the end of a prefix of {tail(0)} tokens")
    return gaps[k - 1][0], " ", False


def _first(n: int, short: Callable[[int], bool]) -> int:
    """The smallest k in [0, n] with short(k) (short is False then True as k grows); n if none."""
    low, high = 0, n
    while low < high:
        middle = (low + high) // 2
        if short(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _cut_to(text: str, tokens: int, count: Count, *, limit: int) -> int:
    """The fewest characters to cut from ``text``'s start so that it has at most ``tokens`` tokens,
    never past ``limit`` (the copy)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high) // 2
        if count(text[middle:]) <= tokens:
            high = middle
        else:
            low = middle + 1
    return low
