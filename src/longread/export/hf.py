"""A Hugging Face ``datasets`` folder: parquet per config and split, and a dataset card.

``datasets.load_dataset(DIR, "prefix_2048")`` reads it offline (the card's YAML
``configs:`` block names each config's files). :func:`read_hf_items` reads it back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from longread.errors import BadInputError, LongreadError
from longread.evaluation.exported import MANIFEST, SPLIT, parquet_path
from longread.export.card import ExportFacts, card_text


def config_name(length: int) -> str:
    return f"prefix_{length}"


def _arrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as exc:
        raise LongreadError(
            "the hf export writes parquet with pyarrow, which is not installed — "
            "run `make install` (the bench extra: pip install -e '.[bench]')"
        ) from exc
    return pyarrow


def write_parquet(items: Sequence[dict[str, Any]], path: Path) -> None:
    """One deterministic parquet file (no timestamps; the same items give the same bytes)."""
    pa = _arrow()
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(list(items))
    pa.parquet.write_table(table, path, compression="zstd", write_statistics=False)


def write_hf(out: Path, items: dict[int, list[dict[str, Any]]], facts: ExportFacts) -> list[Path]:
    written = []
    configs = []
    for length, rows in items.items():
        relative = parquet_path(config_name(length))
        write_parquet(rows, out / relative)
        written.append(out / relative)
        configs.append((config_name(length), relative))
    whole = None
    if facts.export.whole is not None:
        name, rows = facts.export.whole
        whole = (name, parquet_path(name))
        write_parquet(rows, out / whole[1])
        written.append(out / whole[1])
    (out / "README.md").write_text(card_text(facts, configs, SPLIT, whole), encoding="utf-8")
    manifest = json.dumps(facts.manifest(), indent=2, sort_keys=True) + "\n"
    (out / MANIFEST).write_text(manifest, encoding="utf-8")
    return [*written, out / "README.md", out / MANIFEST]


def read_hf_items(folder: str | Path, length: int) -> list[dict[str, Any]]:
    """The items of one prefix-length config of an hf export folder."""
    pa = _arrow()
    path = Path(folder) / parquet_path(config_name(length))
    if not path.is_file():
        manifest = Path(folder) / MANIFEST
        lengths = json.loads(manifest.read_text())["prefix_lengths"] if manifest.is_file() else "?"
        raise BadInputError(path, f"no config {config_name(length)} here", f"exported lengths: {lengths}")
    rows: list[dict[str, Any]] = pa.parquet.read_table(path).to_pylist()
    return rows
