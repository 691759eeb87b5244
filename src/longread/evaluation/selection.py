"""Which instances a run evaluates: all, the first N, a seeded sample stratified by book, or a fixed
selection that runs share so they can be compared pair by pair.

- ``--books-list FILE``: only the books named there (one id a line; ``#`` comments and blank lines
  skipped); an id the data does not hold is an error naming the file and line.
- ``--same-samples-as RUN``: exactly the instances an earlier run evaluated, matched by *pair id* (equal
  for two variants of one item: ChapterBreak's boundary with in-book or out-of-book negatives), read from
  that run's ``selection.json`` (or, for runs written before it listed pair ids, from its rows). Its
  pair ids this data lacks are counted and named, never dropped in silence.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from longread.errors import LongreadError
from longread.runs.layout import SELECTION_FILE, read_samples

T = TypeVar("T")

SAMPLING_RULE = (
    "stratified by book, ordered by hash: each book's instances are ranked by sha256(seed, book id, "
    "instance's pair id) and the books by sha256(seed, book id); books are visited in that order, "
    "round-robin, each giving its next instance, until N are chosen (no book dominates a small sample). "
    "The same seed and N give the same instances whatever else the data holds, and N nests in a larger M; "
    "the chosen instances keep the data file's order"
)


def _rank(seed: int, *parts: str) -> bytes:
    return hashlib.sha256("\0".join(["longread/sample", str(seed), *parts]).encode()).digest()


def stratified_sample(
    items: Sequence[T],
    n: int,
    group_of: Callable[[T], str],
    seed: int,
    id_of: Callable[[T], str] | None = None,
) -> list[T]:
    """``n`` items spread as evenly as possible over groups, in the order :data:`SAMPLING_RULE` states.

    ``id_of`` names an item across data files (a pair id: equal for two variants of one boundary);
    without it an item is named by its place in ``items``. The chosen items keep their input order.
    """
    if n >= len(items):
        return list(items)
    by_group: dict[str, list[tuple[bytes, int]]] = {}
    for index, item in enumerate(items):
        group = group_of(item)
        name = id_of(item) if id_of is not None else str(index)
        by_group.setdefault(group, []).append((_rank(seed, group, name), index))
    queues = [
        [index for _, index in sorted(members)]
        for _, members in sorted(by_group.items(), key=lambda entry: _rank(seed, entry[0]))
    ]
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
    id_of: Callable[[T], str] | None = None,
) -> list[T]:
    """``sample`` first (stratified), then ``limit`` (the first N of what is left)."""
    chosen = list(items)
    if sample is not None:
        chosen = stratified_sample(chosen, sample, group_of, seed, id_of)
    if limit is not None:
        chosen = chosen[:limit]
    return chosen


class SelectionError(LongreadError):
    """A fixed selection that cannot be applied (unknown book, unreadable run)."""


@dataclass(frozen=True)
class FixedSelection:
    """What a fixed selection asked for and what this data lacked of it."""

    source: str
    """``books-list FILE`` or ``same-samples-as RUN``."""
    wanted: int
    unmatched: list[str] = field(default_factory=list)
    """Pair ids of the earlier run this data has no instance for."""

    def as_dict(self) -> dict[str, object]:
        return {"source": self.source, "wanted": self.wanted, "unmatched": list(self.unmatched)}


def read_books_list(path: Path) -> list[tuple[int, str]]:
    """(line number, book id) of every book named in ``path``: one id a line, blank lines and ``#``
    comments skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SelectionError(f"{path}: cannot read the books list ({exc})") from None
    books = []
    for number, line in enumerate(text.splitlines(), start=1):
        book = line.split("#", 1)[0].strip()
        if book:
            books.append((number, book))
    if not books:
        raise SelectionError(f"{path}: names no book (write one book id a line)")
    return books


def keep_books(
    items: Sequence[T], path: Path, group_of: Callable[[T], str]
) -> tuple[list[T], FixedSelection]:
    """The items of the books ``path`` lists, in data order; a listed id the data lacks is an error."""
    listed = read_books_list(path)
    have = {group_of(item) for item in items}
    for number, book in listed:
        if book not in have:
            known = ", ".join(sorted(have)[:10]) + (" …" if len(have) > 10 else "")
            raise SelectionError(
                f"{path}, line {number}: book {book!r} is not in the data (its books: {known}); "
                "fix or remove that line"
            )
    wanted = {book for _, book in listed}
    chosen = [item for item in items if group_of(item) in wanted]
    return chosen, FixedSelection(f"books-list {path}", len(wanted))


def run_pair_ids(run_dir: Path) -> list[str]:
    """The pair ids of the instances an earlier run evaluated (sorted)."""
    path = run_dir / SELECTION_FILE
    try:
        selection = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SelectionError(
            f"{run_dir}: no {SELECTION_FILE} — not a finished longread run (finish it with --resume)"
        ) from None
    except (OSError, ValueError) as exc:
        raise SelectionError(f"{path}: not a selection file ({exc})") from None
    if isinstance(selection, dict) and isinstance(selection.get("pair_ids"), list):
        return sorted({str(pair) for pair in selection["pair_ids"]})
    keys = set(selection.get("keys", [])) if isinstance(selection, dict) else set()
    # A run written before selection.json listed pair ids: its rows name them (or their instance).
    pairs = {
        str(row.get("pair_id") or row.get("id"))
        for row in read_samples(run_dir)
        if row.get("key") in keys and (row.get("pair_id") or row.get("id"))
    }
    if not pairs:
        raise SelectionError(f"{path}: lists no instances to take (and its rows name none)")
    return sorted(pairs)


def same_samples(
    items: Sequence[T], run_dir: Path, pair_of: Callable[[T], str]
) -> tuple[list[T], FixedSelection]:
    """The items whose pair id the run in ``run_dir`` evaluated, in data order, and what it lacked."""
    wanted = run_pair_ids(run_dir)
    wanted_set = set(wanted)
    chosen = [item for item in items if pair_of(item) in wanted_set]
    found = {pair_of(item) for item in chosen}
    unmatched = [pair for pair in wanted if pair not in found]
    if not chosen:
        raise SelectionError(
            f"{run_dir}: none of its {len(wanted)} instances (pair ids such as {wanted[0]!r}) is in this "
            "data — was it made from another build?"
        )
    return chosen, FixedSelection(f"same-samples-as {run_dir}", len(wanted), unmatched)
