"""MuLD style change exported as same-author questions, one per paragraph boundary, run by lm-eval.

Real data: three test documents that `longread build muld/style-change` draws from Gutenberg novels in
../shared. The items are the task's own paragraphs and PAN truth; lm-eval (in-process, offline,
SmolLM2) scores " yes" / " no" after each; those log-probs equal SmolLM2's through longread's backend on
the same text, and lm-eval's ``pan_f1`` and ``multi_author_accuracy`` equal PAN's rule applied by
longread's evaluator functions to lm-eval's own answers regrouped by document.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from longread.benchmarks.muld.tasks.style import paragraphs_of, truth_of
from longread.errors import LongreadError
from longread.evaluation import make_task
from longread.export import ExportOptions, export_task
from longread.metrics.style_change import is_multi_author, style_change_f1
from longread.models.requests import LoglikelihoodRequest
from tests.export.lm_eval_tasks import task_manager
from tests.helpers import needs_shared
from tests.models_fixtures import backend
from tests.tolerances import summed_logprob_tolerance

pytestmark = [needs_shared, pytest.mark.slow]
BUDGET = 48
NAME = "longread_muld_style_change"


def _items(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / f"data/{NAME}_{BUDGET}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_items_are_the_tasks_paragraph_pairs_and_truth(style_data: Path, tmp_path: Path) -> None:
    folder = tmp_path / "lm-eval"
    options = ExportOptions("smollm2", settings=(("paragraph_tokens", str(BUDGET)),))
    report = export_task("muld/style-change", style_data, "lm-eval", folder, options)
    items = _items(folder)
    instances = make_task("muld/style-change").load(style_data)
    assert len(instances) == 3
    expected = [
        (f"{instance.id}#{k}", change, paragraphs_of(instance.document)[k : k + 2])
        for instance in instances
        for k, change in enumerate(truth_of(instance)["changes"])
    ]
    assert [(item["id"], item["label"]) for item in items] == [(key, change) for key, change, _ in expected]
    assert any(item["label"] == 1 for item in items) and any(item["label"] == 0 for item in items)
    for item, (_, _, (first, second)) in zip(items, expected, strict=True):
        head, tail = item["context"].removeprefix("Paragraph A:\n").split("\n\nParagraph B:\n")
        assert first.endswith(head.strip()) and second.startswith(tail.split("\n\nWere paragraphs")[0])
        assert item["choices"] == [" yes", " no"]
    counts = report.facts.counts[BUDGET]
    assert counts["items"] == len(items) and counts["context_cut"] == sum(
        max(item["paragraph_tokens_original"]) > BUDGET for item in items
    )
    assert counts["context_cut"] > 0
    yaml = (folder / f"{NAME}_{BUDGET}.yaml").read_text()
    assert "process_results: !function utils.process_results_style" in yaml
    assert "aggregation: !function utils.pan_f1" in yaml


def test_other_settings_are_refused(style_data: Path, tmp_path: Path) -> None:
    with pytest.raises(LongreadError, match="paragraph_tokens=N only, not threshold"):
        export_task(
            "muld/style-change",
            style_data,
            "lm-eval",
            tmp_path / "out",
            ExportOptions("smollm2", settings=(("threshold", "0.5"),)),
        )


def test_lm_eval_log_probs_and_pan_f1(style_data: Path, tmp_path: Path) -> None:
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM

    folder = tmp_path / "lm-eval"
    options = ExportOptions("smollm2", settings=(("paragraph_tokens", str(BUDGET)),))
    export_task("muld/style-change", style_data, "lm-eval", folder, options)
    items = {item["id"]: item for item in _items(folder)}
    model = backend("smollm2")
    lm = HFLM(pretrained=model.model, tokenizer=model.tokenizer, batch_size=1, device="cpu")
    output = simple_evaluate(
        model=lm,
        tasks=[f"{NAME}_{BUDGET}"],
        task_manager=task_manager(folder),
        log_samples=True,
    )
    assert output is not None
    samples = output["samples"][f"{NAME}_{BUDGET}"]
    assert sorted(sample["doc"]["id"] for sample in samples) == sorted(items)
    ours = model.loglikelihood(
        [LoglikelihoodRequest(sample["doc"]["context"], (" yes", " no")) for sample in samples]
    )
    truth: dict[str, list[int]] = {}
    guess: dict[str, list[int]] = {}
    for sample, mine in zip(samples, ours, strict=True):
        theirs = [float(resp[0]) for resp in sample["filtered_resps"]]
        for score, their in zip(mine.scores, theirs, strict=True):
            assert abs(score.logprob - their) <= summed_logprob_tolerance(score.n_tokens), sample["doc"]["id"]
        doc = sample["doc"]
        truth.setdefault(doc["document"], []).append(doc["label"])
        guess.setdefault(doc["document"], []).append(int(theirs[1] > theirs[0]))
    results = output["results"][f"{NAME}_{BUDGET}"]
    documents = sorted(truth)
    expected = style_change_f1([truth[d] for d in documents], [guess[d] for d in documents], documents)
    assert results["pan_f1,none"] == pytest.approx(expected, abs=1e-12)
    multi = sum(is_multi_author(truth[d]) == is_multi_author(guess[d]) for d in documents) / len(documents)
    assert results["multi_author_accuracy,none"] == pytest.approx(multi, abs=1e-12)
    right = sum(guess[d][k] == truth[d][k] for d in documents for k in range(len(truth[d])))
    assert results["acc,none"] == pytest.approx(right / len(samples), abs=1e-12)


def test_hf_and_inspect_hold_the_same_items(
    style_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets

    from tests.export.test_inspect_task import _load

    options = ExportOptions("smollm2", settings=(("paragraph_tokens", str(BUDGET)),))
    export_task("muld/style-change", style_data, "lm-eval", tmp_path / "lm-eval", options)
    items = _items(tmp_path / "lm-eval")
    export_task("muld/style-change", style_data, "hf", tmp_path / "hf", options)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    split = datasets.load_dataset(str(tmp_path / "hf"), f"prefix_{BUDGET}")["test"]
    assert split.to_list() == items
    card = (tmp_path / "hf/README.md").read_text()
    assert f"| prefix_{BUDGET} | {len(items)} |" in card and "`paragraph_tokens=48`" in card
    export_task("muld/style-change", style_data, "inspect", tmp_path / "inspect", options)
    task = _load(tmp_path / "inspect" / f"{NAME}.py").longread_muld_style_change(prefix_length=BUDGET)
    samples = list(task.dataset)
    assert [sample.id for sample in samples] == [f"{item['id']}@{BUDGET}" for item in items]
    for sample, item in zip(samples, items, strict=True):
        assert sample.input == item["context"] and sample.choices is not None
        assert sample.choices[ord(str(sample.target)) - ord("A")] == item["choices"][item["label"]]


def test_the_command_exports_and_says_what_it_cut(style_data: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from longread.cli.app import app

    out = tmp_path / "out"
    command = ["export", "muld/style-change", "--data", str(style_data), "--to", "lm-eval", "--out", str(out)]
    result = CliRunner().invoke(app, [*command, "--tokenizer", "smollm2", "-o", "paragraph_tokens=48"])
    assert result.exit_code == 0, result.output
    items = _items(out)
    cut = sum(max(item["paragraph_tokens_original"]) > BUDGET for item in items)
    assert f"{len(items)} items" in result.output and f"{cut} contexts cut" in result.output, result.output
    refused = CliRunner().invoke(app, [*command, "--overwrite", "-o", "paragraph_tokens=0"])
    assert refused.exit_code != 0 and "give a whole number of tokens, at least 1" in refused.output
