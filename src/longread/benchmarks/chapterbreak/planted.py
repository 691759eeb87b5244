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
from collections.abc import Sequence

from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance, Planted
from longread.text.planting import SLACK, Count, PlantError, copy_opening, plant_in_text

COPY_TOKENS = 64

__all__ = ["COPY_TOKENS", "SLACK", "Count", "PlantError", "check_plantable", "plant_copies", "plant_copy"]


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
    copy = copy_opening(instance.gold, count, copy_tokens)
    rng = random.Random(
        int.from_bytes(hashlib.sha256(f"{seed}\0{instance.id}\0{distance}".encode()).digest()[:8])
    )
    done = plant_in_text(instance.prefix, copy, distance, count, rng)
    record = Planted(
        distance=distance,
        distance_tokens=done.distance_tokens,
        copy_tokens=done.copy_tokens,
        copy_chars=done.copy_chars,
        at_char=done.at_char,
        at_sentence=done.at_sentence,
        cut_chars=done.cut_chars,
        original_id=instance.id,
        seed=seed,
    )
    cut = done.cut_chars
    start = None if instance.prefix_start_char is None else instance.prefix_start_char + cut
    return instance.model_copy(
        update={
            "id": f"{instance.id}#planted-d{distance}",
            "prefix": done.text,
            "prefix_tokens": count(done.text),
            "prefix_start_char": start,
            "planted": record,
        }
    )
