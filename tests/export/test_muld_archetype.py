"""MuLD character archetype exported as multiple choice: lm-eval scores what longread scores.

Real data: scripts and labels in the published formats the archetype builder reads
(tests/benchmarks/muld/builders/test_archetype.py), built by `build_archetype`. longread evaluates them
with SmolLM2 (fp32, CPU) in a 256-token window (two of three contexts are cut); the export cuts the same
contexts for that window; lm-eval (in-process, offline, the same weights) scores " Hero" / " Villain":
every log-prob within the summed tolerance, each answer (a tie a "tie"), ``acc`` and ``macro_f1`` equal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longread.errors import LongreadError
from longread.evaluation import RunOptions, make_task, run_task
from longread.export import ExportOptions, export_task
from longread.models.hf.backend import HFBackend
from tests.export.lm_eval_tasks import task_manager
from tests.models_fixtures import backend
from tests.tolerances import summed_logprob_tolerance

pytestmark = pytest.mark.slow
WINDOW = 256
SETTINGS = (("chunk_tokens", "128"),)
NAME = f"longread_muld_character_archetype_{WINDOW}"


def test_lm_eval_answers_and_macro_f1_equal_longread(archetype_data: Path, tmp_path: Path) -> None:
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM

    folder = tmp_path / "lm-eval"
    options = ExportOptions("smollm2", max_length=WINDOW, settings=SETTINGS)
    report = export_task("muld/character-archetype", archetype_data, "lm-eval", folder, options)
    counts = report.facts.counts[WINDOW]
    items = [json.loads(line) for line in (folder / f"data/{NAME}.jsonl").read_text().splitlines()]
    assert counts["items"] == len(items) >= 2 and counts["context_inexact"] == 0
    assert 0 < counts["context_cut"] <= len(items)  # 2 of the 3 contexts outgrow the window

    model = backend("smollm2")
    run = tmp_path / "run"
    ours = HFBackend(model.loaded, spec="smollm2", max_length=WINDOW)
    task = make_task("muld/character-archetype", dict(SETTINGS))
    run_task(task, archetype_data, ours, run, RunOptions(show_progress=False))
    rows = {row["id"]: row for row in map(json.loads, (run / "samples.jsonl").read_text().splitlines())}
    assert {item["id"]: item["context_tokens"] for item in items} == {
        key: row["context_tokens_kept"] for key, row in rows.items()
    }

    lm = HFLM(pretrained=model.model, tokenizer=model.tokenizer, batch_size=1, device="cpu")
    output = simple_evaluate(model=lm, tasks=[NAME], task_manager=task_manager(folder), log_samples=True)
    assert output is not None
    samples = output["samples"][NAME]
    assert sorted(sample["doc"]["id"] for sample in samples) == sorted(rows)
    for sample in samples:
        row = rows[sample["doc"]["id"]]
        theirs = [float(resp[0]) for resp in sample["filtered_resps"]]
        for mine, their, n in zip(row["logprobs"], theirs, sample["doc"]["choice_tokens"], strict=True):
            assert abs(mine - their) <= summed_logprob_tolerance(n), (row["id"], mine, their)
        assert sample["acc"] == float(row["correct"])
    results = output["results"][NAME]
    overall = json.loads((run / "results.json").read_text())["overall"]["metrics"]
    assert results["macro_f1,none"] == pytest.approx(overall["macro_f1"]["value"], abs=1e-12)
    assert results["acc,none"] == pytest.approx(overall["accuracy"]["value"], abs=1e-12)


def test_generate_method_and_a_missing_window_are_refused(archetype_data: Path, tmp_path: Path) -> None:
    with pytest.raises(LongreadError, match="-o method=generate is not exported"):
        export_task(
            "muld/character-archetype",
            archetype_data,
            "lm-eval",
            tmp_path / "out",
            ExportOptions("smollm2", max_length=WINDOW, settings=(("method", "generate"),)),
        )
    with pytest.raises(LongreadError, match="needs --max-length"):
        export_task(
            "muld/character-archetype", archetype_data, "hf", tmp_path / "out", ExportOptions("smollm2")
        )
