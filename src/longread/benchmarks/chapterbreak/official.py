"""The official ChapterBreak layout, both ways.

``{"pg19": {work_id: [{"ctx": prefix, "pos": gold, "negs": [negatives]}]}, "ao3": {...}}``,
one file per prefix length (``chapterbreak_ctx_{N}.json``, ``ctx`` cut from the
left to N GPT-2 tokens). Importing keeps every text as it is and recounts tokens
with the named tokenizer; exporting groups instances by split and book in file
order, so official → longread → official gives the same instances back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from longread.benchmarks.chapterbreak.schema import ChapterBreakInstance
from longread.errors import BadInputError
from longread.files import atomic_write_text, read_text
from longread.text.tokenizers import DEFAULT_TOKENIZER, Encoding, load_tokenizer

OFFICIAL_SPLITS = ("pg19", "ao3")
# The official layout knows only pg19 and ao3: books of other collections go where their kind of book
# goes (a Project Gutenberg or plain-text book under pg19, the published set's book collection).
_OFFICIAL_SPLIT_OF = {"gutenberg": "pg19", "plain": "pg19"}
# The published prefix lengths (in GPT-2 tokens).
OFFICIAL_PREFIX_LENGTHS = (256, 512, 1024, 2048, 4096, 8192)


def read_official(path: str | Path, *, tokenizer: str = DEFAULT_TOKENIZER) -> list[ChapterBreakInstance]:
    text = read_text(path, max_line_chars=None)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInputError(
            path,
            f"not valid JSON ({exc.msg}, column {exc.colno})",
            "the official ChapterBreak files are one JSON object; check the download is complete",
            line=exc.lineno,
        ) from None
    if not isinstance(data, dict) or not any(split in data for split in OFFICIAL_SPLITS):
        found = ", ".join(map(str, list(data)[:5])) if isinstance(data, dict) else type(data).__name__
        raise BadInputError(
            path,
            f"expected an object with 'pg19' and/or 'ao3' keys, found {found}",
            "is this an official ChapterBreak file (chapterbreak_ctx_*.json)?",
        )
    counter = load_tokenizer(tokenizer)
    instances: list[ChapterBreakInstance] = []
    for split in OFFICIAL_SPLITS:
        works = data.get(split, {})
        if not isinstance(works, dict):
            raise BadInputError(path, f"'{split}' must map work ids to lists of examples", item=split)
        for work_id, examples in works.items():
            if not isinstance(examples, list):
                raise BadInputError(path, "a work must map to a list of examples", item=f"{split}/{work_id}")
            for index, example in enumerate(examples):
                instances.append(
                    _import_example(path, split, str(work_id), index, example, counter.count, tokenizer)
                )
    return instances


def _import_example(
    path: str | Path, split: str, work_id: str, index: int, example: Any, count: Any, tokenizer: str
) -> ChapterBreakInstance:
    where = f"{split}/{work_id}[{index}]"
    if not isinstance(example, dict):
        raise BadInputError(path, "an example must be an object with ctx, pos, negs", item=where)
    missing = [key for key in ("ctx", "pos", "negs") if key not in example]
    if missing:
        raise BadInputError(
            path, f"example lacks {', '.join(missing)}", "each needs ctx, pos and negs", item=where
        )
    ctx, pos, negs = example["ctx"], example["pos"], example["negs"]
    if not isinstance(ctx, str) or not isinstance(pos, str) or not isinstance(negs, list):
        raise BadInputError(path, "ctx and pos must be strings and negs a list of strings", item=where)
    if not all(isinstance(n, str) for n in negs):
        raise BadInputError(path, "every entry of negs must be a string", item=where)
    return ChapterBreakInstance(
        id=f"{split}/{work_id}/chapter/{index}",
        split=split,
        book_id=work_id,
        book_title=work_id,
        suffix_type="chapter",
        negatives_from="in-book",
        chapter_index=index,
        boundary_char=None,
        prefix=ctx,
        prefix_start_char=None,
        prefix_truncated=None,
        prefix_tokens=count(ctx),
        prefix_tokens_original=None,
        prefix_budget=None,
        gold=pos,
        negatives=list(negs),
        gold_tokens=count(pos),
        negative_tokens=[count(n) for n in negs],
        candidate_chars_original=None,
        suffix_budget=None,
        gold_source=None,
        negative_sources=None,
        tokenizer=tokenizer,
        seed=None,
        origin=f"official:{Path(path).name}",
    )


def official_split(split: str) -> str:
    """The official layout's key for a longread split: ``gutenberg`` and ``plain`` books go under ``pg19``."""
    return _OFFICIAL_SPLIT_OF.get(split, split)


def to_official(instances: Iterable[ChapterBreakInstance]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    layout: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for instance in instances:
        works = layout.setdefault(official_split(instance.split), {})
        works.setdefault(instance.book_id, []).append(
            {"ctx": instance.prefix, "pos": instance.gold, "negs": list(instance.negatives)}
        )
    return layout


def write_official(instances: Iterable[ChapterBreakInstance], path: str | Path) -> None:
    atomic_write_text(path, json.dumps(to_official(instances), ensure_ascii=False))


def official_file_name(prefix_tokens: int) -> str:
    """The published name of the file with ``prefix_tokens``-token prefixes."""
    return f"chapterbreak_ctx_{prefix_tokens}.json"


def parse_prefix_lengths(text: str) -> tuple[int, ...]:
    """ "256,512,1024" → (256, 512, 1024), sorted and distinct; ValueError on anything else."""
    try:
        lengths = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise ValueError(f"{text!r}: give comma-separated token counts, e.g. 256,512,1024") from None
    if not lengths or lengths[0] < 1:
        raise ValueError(f"{text!r}: give at least one positive token count")
    return lengths


def tail_start(encoding: Encoding, max_tokens: int) -> int:
    """Character offset where the last ``max_tokens`` tokens start (0 when all fit).

    Moved forward past a token that shares a character with the one before it
    (byte-level BPE splits accented or CJK characters), so the cut never keeps more.
    """
    count = len(encoding.ids)
    if count <= max_tokens:
        return 0
    index = count - max_tokens
    while index < count and encoding.starts[index] < encoding.ends[index - 1]:
        index += 1
    return int(encoding.starts[index]) if index < count else int(encoding.ends[-1])


def write_official_by_length(
    instances: Iterable[ChapterBreakInstance],
    folder: str | Path,
    prefix_lengths: Iterable[int] = OFFICIAL_PREFIX_LENGTHS,
    *,
    tokenizer: str = DEFAULT_TOKENIZER,
) -> list[Path]:
    """One official file per prefix length in ``folder``, each ``ctx`` cut from the left to that length.

    Lengths count ``tokenizer`` tokens (GPT-2 by default, as the published set).
    Returns the written paths (``chapterbreak_ctx_{N}.json``).
    """
    rows = list(instances)
    lengths = sorted(set(prefix_lengths))
    if not lengths or lengths[0] < 1:
        raise ValueError(f"prefix lengths must be positive token counts, not {lengths}")
    encoder = load_tokenizer(tokenizer)
    # Where each prefix starts for each length: one tokenisation per prefix.
    cuts: list[list[int]] = []
    for row in rows:
        encoding = encoder.encode(row.prefix)
        cuts.append([tail_start(encoding, length) for length in lengths])
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for k, length in enumerate(lengths):
        cut_rows = [_with_prefix(row, row.prefix[cut[k] :]) for row, cut in zip(rows, cuts, strict=True)]
        path = out / official_file_name(length)
        write_official(cut_rows, path)
        written.append(path)
    return written


def _with_prefix(instance: ChapterBreakInstance, prefix: str) -> ChapterBreakInstance:
    if prefix == instance.prefix:
        return instance
    return instance.model_copy(update={"prefix": prefix})
