"""lm-evaluation-harness on the exported NarrativeXL summaries scores what longread scores.

Real scenes of Frankenstein with summaries made without a model (tests/benchmarks/narrativexl/books.py),
two of them asked, at a scene budget that cuts (128 tokens) and one that does not (1024): every
summary's log-prob within the summed-log-prob tolerance, and each sample's accuracy the same by mean
log-prob per token (longread's default) and by sum.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from longread.benchmarks.narrativexl.summaries_task import SummariesSettings, SummariesTask
from longread.evaluation import RunOptions, run_task
from longread.export import ExportOptions, export_task
from tests.benchmarks.narrativexl.books import make_book
from tests.export.lm_eval_tasks import task_manager
from tests.models_fixtures import backend
from tests.tolerances import summed_logprob_tolerance

LENGTHS = (128, 1024)


def _longread_rows(data: Path, length: int, run: Path) -> dict[str, dict[str, Any]]:
    settings = SummariesSettings(max_scene_tokens=length)
    run_task(SummariesTask(settings), data, backend("smollm2"), run, RunOptions(show_progress=False))
    rows = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    return {row["id"]: row for row in rows}


@pytest.mark.slow
def test_lm_eval_equals_longread_on_summaries(tmp_path: Path) -> None:
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM

    data = tmp_path / "frankenstein.json"
    # scenes of ~1,000 characters (~250 tokens): cut at 128, whole at 1024, each forward a third of 3,000's
    data.write_text(make_book(84, 2, scene_chars=1000).model_dump_json(), encoding="utf-8")
    folder = tmp_path / "lm-eval"
    report = export_task("narrativexl-summaries", data, "lm-eval", folder, ExportOptions("smollm2", LENGTHS))
    assert report.facts.counts[128]["context_cut"] == 2 and report.facts.counts[1024]["context_cut"] == 0

    model = backend("smollm2")
    lm = HFLM(pretrained=model.model, tokenizer=model.tokenizer, batch_size=1, device="cpu")
    names = [f"longread_narrativexl_summaries_{length}" for length in LENGTHS]
    output = simple_evaluate(model=lm, tasks=names, task_manager=task_manager(folder), log_samples=True)
    assert output is not None
    for length in LENGTHS:
        ours = _longread_rows(data, length, tmp_path / f"run-{length}")
        samples = output["samples"][f"longread_narrativexl_summaries_{length}"]
        assert sorted(s["doc"]["id"] for s in samples) == sorted(ours) and len(ours) == 2
        for sample in samples:
            doc, row = sample["doc"], ours[sample["doc"]["id"]]
            theirs = [float(resp[0]) for resp in sample["filtered_resps"]]
            label = doc["label"]
            assert row["n_tokens"] == [doc["choice_tokens"][label], *doc["choice_tokens"][:label]]
            for mine, their, n in zip(
                row["logprobs"], [theirs[label], *theirs[:label]], row["n_tokens"], strict=True
            ):
                assert abs(mine - their) <= summed_logprob_tolerance(n), (doc["id"], length, mine, their)
            assert bool(sample["acc_mean"]) == row["correct_mean"] == row["correct"]
            assert bool(sample["acc"]) == row["correct_sum"]


def test_failed_scenes_are_skipped_and_counted(tmp_path: Path) -> None:
    data = tmp_path / "frankenstein.json"
    data.write_text(make_book(84, 4, fail=(1,)).model_dump_json(), encoding="utf-8")
    out = tmp_path / "hf"
    report = export_task("narrativexl-summaries", data, "hf", out, ExportOptions("gpt2", (64, 4096)))
    assert report.facts.counts[64] == {
        "items": 3, "context_cut": 3, "short_prefix": 0, "context_inexact": 0,
        "candidates_cut": 0, "candidates_inexact": 0,
    }  # fmt: skip
    assert report.facts.counts[4096]["context_cut"] == 0 and report.facts.counts[4096]["short_prefix"] == 3
    card = (out / "README.md").read_text()
    assert "1 scene(s) skipped (failed or without a distorted summary)" in card
    assert "moskvichev2023narrativexl" in card
    import datasets

    rows = datasets.load_dataset(str(out), "prefix_64")["test"]
    assert rows["id"] == ["84/0000", "84/0002", "84/0003"]
    assert [len(choices) for choices in rows["choices"]] == [6, 4, 3]
    assert all(
        choices[label].startswith(" ") for choices, label in zip(rows["choices"], rows["label"], strict=True)
    )
