"""lm-evaluation-harness on the exported ChapterBreak tasks scores what longread scores.

The real lm-eval (the pinned version of the bench extra), offline, in-process, with the
weights longread already loaded; the same three real instances (SmolLM2 at the longer prefix length,
Gemma 3 at the shorter) through longread's own runner. Every candidate's log-prob agrees within the
summed-log-prob tolerance and every sample's accuracy is the same (longread: a tie
with the gold is wrong; the export puts the gold last, so lm-eval's argmax agrees).

Two families, two tokenizer specs: SmolLM2 with its tokenizer named as a folder
(``--tokenizer hf:FOLDER``, what a user of any Hugging Face model passes) and
Gemma 3 270M (``--tokenizer gemma3``: a 262K vocabulary and a tokenizer whose model
needs its ``<bos>``; lm-eval is given ``add_bos_token=True``, as the card says).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.evaluation import RunOptions, run_task
from longread.export import ExportOptions, export_task
from longread.exportable.tokenizer import model_folder
from tests.export.conftest import LENGTHS, SUFFIX_TOKENS
from tests.export.lm_eval_tasks import task_manager
from tests.models_fixtures import backend
from tests.tolerances import summed_logprob_tolerance

pytestmark = pytest.mark.slow


def _lm_eval_samples(
    folder: Path, model: Any, add_bos: bool, lengths: tuple[int, ...]
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(
        pretrained=model.model, tokenizer=model.tokenizer, batch_size=1, device="cpu", add_bos_token=add_bos
    )
    manager = task_manager(folder)
    names = [f"longread_chapterbreak_{length}" for length in lengths]
    output = simple_evaluate(model=lm, tasks=names, task_manager=manager, log_samples=True)
    assert output is not None
    return output["samples"], output["results"]


def _tokenizer_spec(name: str) -> str:
    """SmolLM2's tokenizer by its folder (the ``hf:`` path); Gemma 3 by its name."""
    return f"hf:{model_folder(name)}" if name == "smollm2" else name


@pytest.mark.parametrize("name", ["smollm2", "gemma3"])
def test_lm_eval_log_probs_and_accuracy_equal_longread(
    chapterbreak_data: Path, tmp_path: Path, name: str
) -> None:
    folder = tmp_path / "lm-eval"
    # One prefix length each: the longer for SmolLM2, the shorter for Gemma 3, whose 262K-token output layer
    # makes each lm-eval request about twice as dear (its start token and tokenizer are what this case is
    # for); an export of two lengths as two lm-eval tasks: test_narrativexl_summaries.py.
    lengths = LENGTHS[1:] if name == "smollm2" else LENGTHS[:1]
    options = ExportOptions(_tokenizer_spec(name), lengths, SUFFIX_TOKENS)
    report = export_task("chapterbreak", chapterbreak_data, "lm-eval", folder, options)
    assert all(counts["context_inexact"] == 0 for counts in report.facts.counts.values())
    model = backend(name)
    add_bos = model.encoder.start_token_id is not None  # Gemma: True; SmolLM2 adds none
    assert add_bos == (name == "gemma3")

    settings = ChapterBreakSettings(prefix_lengths=lengths, suffix_tokens=SUFFIX_TOKENS)
    started = time.perf_counter()
    run_task(
        ChapterBreakTask(settings),
        chapterbreak_data,
        model,
        tmp_path / "run",
        RunOptions(show_progress=False),
    )
    longread_seconds = time.perf_counter() - started
    rows = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    ours = {(row["id"], row["prefix_length"]): row for row in rows}

    started = time.perf_counter()
    samples, results = _lm_eval_samples(folder, model, add_bos, lengths)
    lm_eval_seconds = time.perf_counter() - started
    worst = 0.0
    compared = 0
    for length in lengths:
        task_samples = samples[f"longread_chapterbreak_{length}"]
        assert len(task_samples) == 3
        for sample in task_samples:
            doc = sample["doc"]
            row = ours[(doc["id"], length)]
            theirs = [float(resp[0]) for resp in sample["filtered_resps"]]
            gold_first = [theirs[doc["label"]], *theirs[: doc["label"]]]
            assert row["continuation_tokens"] == [doc["choice_tokens"][-1], *doc["choice_tokens"][:-1]]
            for mine, their, n in zip(row["logprobs"], gold_first, row["continuation_tokens"], strict=True):
                assert abs(mine - their) <= summed_logprob_tolerance(n), (doc["id"], length, mine, their)
                worst = max(worst, abs(mine - their))
                compared += 1
            assert bool(sample["acc"]) == row["correct"], (doc["id"], length)
        accuracy = sum(ours[(s["doc"]["id"], length)]["correct"] for s in task_samples) / 3
        assert results[f"longread_chapterbreak_{length}"]["acc,none"] == pytest.approx(accuracy, abs=0)
    print(
        f"\n{name}: lm-eval vs longread: {compared} log-probs, max |Δ| {worst:.2e} nats; "
        f"wall time lm-eval {lm_eval_seconds:.1f} s, longread {longread_seconds:.1f} s"
    )
