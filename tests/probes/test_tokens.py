"""``longread probe tokens``: every token scored with a long and a short context (SmolLM2, Gemma 3 270M
for its ``<bos>``), checked against direct forwards of exactly the context each token is said to see."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch

from longread.models.hf.token_logprobs import long_logprobs, short_logprobs
from longread.probes.tokens import ProbeSettingsError, TokenProbeSettings, frequent_types, last_seen_distances
from tests.helpers import REPO_ROOT
from tests.models_fixtures import backend, book_text
from tests.tolerances import summed_logprob_tolerance

BOOK = REPO_ROOT / "src" / "longread" / "data" / "books" / "pg84.txt.gz"


def _direct(spec: str, ids: list[int], position: int, context: int) -> float:
    """log p(ids[position]) read after exactly ``context`` text tokens (and the start token, if any)."""
    model = backend(spec)
    start = model.encoder.start_token_id
    window = ([start] if start is not None else []) + ids[position - context : position]
    with torch.inference_mode():
        logits = model.model(input_ids=torch.tensor([window])).logits[0, -1].float()
    return float(torch.log_softmax(logits, dim=-1)[ids[position]])


@pytest.mark.parametrize("spec", ["smollm2", "gemma3"])
def test_both_passes_give_each_token_the_context_they_say(spec: str) -> None:
    model = backend(spec)
    text = book_text()
    ids = model.encoder.encode_plain(text[text.index("It is a truth universally") :][:2000])[:300]
    start = model.encoder.start_token_id
    long, seen = long_logprobs(model.model, ids, window=160, chunk=50, start_token=start)
    assert (long[0] is None) == (start is None) and all(value is not None for value in long[1:])
    assert seen[:160] == list(range(160)) and all(80 <= n <= 160 for n in seen[160:])  # the sliding window
    short = short_logprobs(model.model, ids, short=48, stride=16, start_token=start, batch=4)
    assert all(value is None for value in short[:48]) and all(value is not None for value in short[48:])
    bound = summed_logprob_tolerance(1)
    for position in (1, 37, 159, 160, 161, 250, 299):
        assert abs(long[position] - _direct(spec, ids, position, seen[position])) <= bound, position  # type: ignore[operator]
    # the short window: block starts 48, 64 …; a token at offset o of a block of n sees 48 − n + 1 + o tokens
    for position in (48, 55, 63, 64, 200, 287, 288, 299):
        block = 48 + (position - 48) // 16 * 16
        scored = min(16, len(ids) - block)  # the last block is short: its window ends at the text's end
        context = 48 - scored + 1 + (position - block)
        assert abs(short[position] - _direct(spec, ids, position, context)) <= bound, position  # type: ignore[operator]
    exact = short_logprobs(model.model, ids[:120], short=32, stride=1, start_token=start)
    assert abs(exact[100] - _direct(spec, ids, 100, 32)) <= bound  # type: ignore[operator]


def test_distances_and_frequent_types() -> None:
    assert last_seen_distances([5, 6, 5, 5, 7, 6]) == [None, None, 2, 1, None, 4]
    ids = [1] * 50 + [2] * 20 + list(range(100, 118))
    assert frequent_types(ids) == {1, 2}  # 10% of 20 types, rounded up


def test_bad_settings_are_refused_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(ProbeSettingsError, match="must be at least 1 and below --window"):
        TokenProbeSettings(window=256, short=256)
    with pytest.raises(ProbeSettingsError, match="--stride must lie in 1…64"):
        TokenProbeSettings(window=256, short=64, stride=65)
    out = tmp_path / "probe"
    command = [sys.executable, "-m", "longread.cli", "probe", "tokens", str(BOOK), "--model", "smollm2",
               "--out", str(out), "--short", "64", "--stride", "0"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, timeout=300)
    assert done.returncode == 2 and "--stride must lie in 1…64" in done.stderr and not out.exists()


def test_the_command_writes_the_table_the_summary_and_the_plot(tmp_path: Path) -> None:
    out = tmp_path / "probe"
    command = [sys.executable, "-m", "longread.cli", "probe", "tokens", str(BOOK), "--model", "smollm2",
               "--out", str(out), "--window", "256", "--short", "32", "--stride", "32", "--max-tokens", "300",
               "--quiet"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    table = pq.read_table(out / "tokens.parquet").to_pylist()
    assert len(table) == 300 - 32 and table[0]["position"] == 32
    assert set(table[0]) >= {"book", "position", "token_id", "text", "lcl", "short_logprob", "lsd", "key",
                             "last_seen_distance", "frequent"}  # fmt: skip
    for row in table:
        assert row["lsd"] == pytest.approx(row["lcl"] - row["short_logprob"])
        assert row["key"] == (row["lsd"] > 2.0 and row["lcl"] > -2.0)
    summary = json.loads((out / "summary.json").read_text())
    (book,) = summary["books"]
    assert book["tokens_scored"] == 268 and book["key_tokens"] == sum(row["key"] for row in table)
    assert "only the first 300 tokens" in " ".join(summary["notes"])
    assert summary["costs"][0]["short_tokens_per_book_token"] == 1.0
    assert (out / "tokens.png").stat().st_size > 10_000 and "LongPPL" in (out / "summary.md").read_text()
