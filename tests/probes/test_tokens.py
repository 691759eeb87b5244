"""``longread probe tokens``: every token scored with a long and a short context (SmolLM2, Gemma 3 270M
for its ``<bos>``), checked against direct forwards of exactly the context each token is said to see."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch
from typer.testing import CliRunner

from longread.cli.app import app
from longread.models.hf.token_logprobs import long_logprobs, short_logprobs
from longread.probes.key_tokens import inside
from longread.probes.tokens import ProbeSettingsError, TokenProbeSettings, frequent_types, last_seen_distances
from tests.helpers import REPO_ROOT, unboxed
from tests.models_fixtures import backend, book_text
from tests.tolerances import summed_logprob_tolerance

BOOK = REPO_ROOT / "src" / "longread" / "data" / "books" / "pg84.txt.gz"


def _direct(spec: str, ids: list[int], position: int, context: int) -> float:
    """log p(ids[position]) read after exactly ``context`` text tokens (and the start token, if any)."""
    model = backend(spec)
    start = model.encoder.start_token_id
    window = ([start] if start is not None else []) + ids[position - context : position]
    with torch.inference_mode():
        logits = model.model(input_ids=torch.tensor([window]), logits_to_keep=1).logits[0, -1].float()
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
    exact = short_logprobs(model.model, ids[60:101], short=32, stride=1, start_token=start)  # 9 windows
    assert abs(exact[40] - _direct(spec, ids, 100, 32)) <= bound  # type: ignore[operator]  # ids[100]


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
    command = ["probe", "tokens", str(BOOK), "--model", "smollm2", "--out", str(out), "--short", "64",
               "--stride", "0"]  # fmt: skip
    done = CliRunner().invoke(app, command)  # in this process: a refusal needs no interpreter of its own
    said = unboxed(done.stderr)
    assert done.exit_code == 2 and "--stride must lie in 1…64" in said and not out.exists()


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
                             "self_key", "last_seen_distance", "frequent"}  # fmt: skip
    for row in table:
        assert row["lsd"] == pytest.approx(row["lcl"] - row["short_logprob"])
        assert row["key"] == (row["lsd"] > 2.0 and row["lcl"] > -2.0)
    summary = json.loads((out / "summary.json").read_text())
    (book,) = summary["books"]
    assert book["tokens_scored"] == 268 and book["key_tokens"] == sum(row["key"] for row in table)
    assert "only the first 300 tokens" in " ".join(summary["notes"])
    assert summary["costs"][0]["short_tokens_per_book_token"] == 1.0
    markdown = (out / "summary.md").read_text()
    assert (out / "tokens.png").stat().st_size > 10_000 and "self-evaluated, so LongPPL ≤ e^2" in markdown
    assert "| 84 | seen beyond K |" in markdown and book["key_tokens_by"] == "self"
    lsd = book["lsd_by_category"]["never seen"]
    never = [row["lsd"] for row in table if row["last_seen_distance"] is None]
    assert lsd["n"] == len(never) and lsd["mean"] == pytest.approx(sum(never) / len(never))


def test_inside_takes_tokens_wholly_within_a_key_span() -> None:
    starts, ends = np.array([0, 3, 5, 9, 12]), np.array([3, 5, 9, 12, 15])
    chosen = inside(starts, ends, [(3, 9), (10, 15)])
    assert chosen.tolist() == [False, True, True, False, True]  # 9-12 straddles the second span's edge


@pytest.mark.parametrize(("probed", "judge"), [("smollm2", "gemma3"), ("gemma3", "smollm2")])
def test_an_evaluator_chooses_the_key_tokens_and_its_passes_are_kept(
    probed: str, judge: str, tmp_path: Path
) -> None:
    """LongPPL as its paper defines it: the evaluator's key spans, the probed model's loss on the tokens
    inside them; the evaluator's passes are read again from the folder, not recomputed."""
    from longread.documents.reader import read_book
    from longread.probes.key_tokens import load_passes, made_by
    from longread.probes.tokens import probe_book, summarise

    settings = TokenProbeSettings(window=256, short=32, stride=32, max_tokens=260, evaluator=judge)
    whole = read_book(BOOK)
    book = dataclasses.replace(whole, chapters=whole.chapters[:1])  # the first letter: well over 260 tokens
    table, costs = probe_book(backend(probed), book, settings, evaluator=backend(judge), out=tmp_path / "a")
    text = book.render()[0]
    wanted = made_by(backend(judge), book.id, text, settings, 256)
    passes = load_passes(tmp_path / "a", book.id, wanted)
    assert passes is not None and len(passes.lcl) == 260 and np.isnan(passes.short[:32]).all()
    spans = passes.key_spans(2.0, -2.0)
    assert spans and table.evaluator_key is not None and table.evaluator_key.sum() > 0
    encoder = backend(probed).encoder
    offsets = encoder.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    for position, key in zip(table.positions, table.evaluator_key, strict=True):
        start, end = offsets[position]
        assert key == any(low <= start and end <= high and end > start for low, high in spans), position
    summary = summarise(table)
    expected = float(np.exp(-np.mean(table.lcl[table.evaluator_key])))
    assert summary["key_tokens_by"] == "evaluator" and summary["long_ppl"]["value"] == pytest.approx(expected)
    assert summary["self_long_ppl"]["value"] <= np.exp(2.0)  # self-evaluated: bounded by construction
    again, more = probe_book(backend(probed), book, settings, evaluator=backend(judge), out=tmp_path / "b",
                             reuse=[tmp_path / "a"])  # fmt: skip
    assert again.evaluator_facts is not None and again.evaluator_facts["reused_from"] == str(tmp_path / "a")
    assert (again.evaluator_key == table.evaluator_key).all() and (tmp_path / "b" / "evaluator").is_dir()
    assert more["evaluator_seconds"] < costs["evaluator_seconds"]


def test_two_probes_compare_with_paired_intervals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two models, the same evaluator: B − A of each statistic equals the difference of the folders' own.
    The commands run in this process on the session's loaded models (the command as a process: above)."""
    from longread.probes.compare import compare, load_tokens, write_compare

    monkeypatch.setattr("longread.models.registry.load_backend", lambda spec, **_: backend(spec))
    folders = []
    for spec in ("smollm2", "gemma3"):
        out = tmp_path / spec
        arguments = ["probe", "tokens", str(BOOK), "--model", spec, "--out", str(out), "--window", "256",
                     "--short", "32", "--stride", "32", "--max-tokens", "200", "--evaluator", "smollm2",
                     "--quiet"]  # fmt: skip
        if folders:
            arguments += ["--evaluator-from", str(folders[0])]
        done = CliRunner().invoke(app, arguments)
        assert done.exit_code == 0, (done.output[-3000:], done.exception)
        folders.append(out)
    result = compare(load_tokens(folders[0]), load_tokens(folders[1]))
    summaries = [json.loads((folder / "summary.json").read_text())["books"][0] for folder in folders]
    row = next(row for row in result["rows"] if row["statistic"] == "long_ppl")
    assert row["a"] == pytest.approx(summaries[0]["long_ppl"]["value"])
    assert row["b"] == pytest.approx(summaries[1]["long_ppl"]["value"])
    low, high = row["difference_ci"]
    assert low <= row["difference"] <= high and result["resampled"].startswith("merged spans")
    assert "reused_from" in json.dumps(summaries[1]) and summaries[1]["evaluator"]["reused_from"]
    assert "B − A" in write_compare(result, tmp_path / "cmp").read_text()
