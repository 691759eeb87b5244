"""``probe compare`` refuses folders whose key tokens were chosen another way, naming what differs; with
one book its LongPPL intervals resample merged spans (runs of key or other tokens), not tokens."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from longread.probes.compare import compare, load_tokens, spans
from longread.probes.errors import ProbeSettingsError

SETTINGS = {"alpha": 2.0, "beta": -2.0, "short": 64, "stride": 64, "window": 512, "max_tokens": 1200,
            "evaluator": "gemma3"}  # fmt: skip


def _folder(path: Path, seed: int, **changes: Any) -> Path:
    """A token probe's folder: one book of 400 tokens, key tokens in runs of 10."""
    path.mkdir()
    rng = np.random.default_rng(seed)
    n = 400
    key = (np.arange(n) // 10) % 4 == 0
    lcl = np.where(key, rng.normal(-4.0, 1.0, n), rng.normal(-2.0, 1.0, n))
    columns = {
        "book": ["pg1"] * n, "position": list(range(n)), "token_id": list(range(n)), "text": ["x"] * n,
        "lcl": lcl.tolist(), "short_logprob": (lcl - 1).tolist(), "lsd": [1.0] * n, "key": key.tolist(),
        "self_key": key.tolist(), "last_seen_distance": [None] * n, "frequent": [False] * n,
        "long_context": [True] * n,
    }  # fmt: skip
    pq.write_table(pa.table(columns), path / "tokens.parquet")
    weights = changes.pop("weights", "abc123")
    summary = {
        "settings": {**SETTINGS, **changes},
        "model": {"spec": f"model-{seed}"},
        "books": [{"book": "pg1", "evaluator": {"spec": "gemma3", "weights_fingerprint": weights}}],
    }
    (path / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return path


def test_key_tokens_chosen_otherwise_are_refused_naming_what_differs(tmp_path: Path) -> None:
    a = load_tokens(_folder(tmp_path / "a", 1))
    for name, change, said in (
        ("alpha", {"alpha": 1.0}, "alpha 2.0 against 1.0"),
        ("stride", {"stride": 32}, "stride 64 against 32"),
        ("weights", {"weights": "other"}, "evaluator weights 'abc123' against 'other'"),
    ):
        b = load_tokens(_folder(tmp_path / name, 2, **change))
        with pytest.raises(ProbeSettingsError, match="chose their key tokens differently") as refused:
            compare(a, b)
        assert said in str(refused.value)


def test_one_book_resamples_merged_spans(tmp_path: Path) -> None:
    a = load_tokens(_folder(tmp_path / "a", 1))
    b = load_tokens(_folder(tmp_path / "b", 2))
    units = spans(a.books["pg1"])
    assert [len(u) for u in units] == [10, 30] * 10  # a key run of 10, then 30 other tokens
    result = compare(a, b)
    assert result["resampled"].startswith("merged spans")
    long_ppl = next(r for r in result["rows"] if r["statistic"] == "long_ppl")
    assert long_ppl["difference_ci"][0] < long_ppl["difference"] < long_ppl["difference_ci"][1]
