"""lm-evaluation-harness's greedy generations on the exported MuLD VLSP, HotpotQA and NarrativeQA
tasks are longread's own.

Two real theses from the shared corpus, built by `longread build muld/vlsp`; exported for SmolLM2 with a
512-token window; lm-eval 0.4 (in-process, offline, the SmolLM2 weights longread loaded) generates 16
tokens greedily on each, and longread evaluates the same data with the same settings: the predictions
are equal string for string, and so are the metrics lm-eval computes through longread's functions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from longread.benchmarks.muld.export.generate import export_muld
from longread.errors import LongreadError
from longread.evaluation import RunOptions, make_task, run_task
from longread.export import ExportOptions, export_task
from longread.models.hf.backend import HFBackend
from tests.export.lm_eval_tasks import task_manager
from tests.helpers import needs_shared
from tests.models_fixtures import backend

pytestmark = [needs_shared, pytest.mark.slow]
WINDOW = 512
SETTINGS = (("mode", "first"), ("summary_tokens", "16"))


def _lm_eval(
    folder: Path, model: HFBackend, name: str = "longread_muld_vlsp"
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=model.model, tokenizer=model.tokenizer, batch_size=1, device="cpu")
    manager = task_manager(folder)
    output = simple_evaluate(model=lm, tasks=[name], task_manager=manager, log_samples=True)
    assert output is not None
    return output["samples"][name], output["results"][name]


def test_lm_eval_generates_what_longread_generates(vlsp_data: Path, tmp_path: Path) -> None:
    folder = tmp_path / "lm-eval"
    options = ExportOptions("smollm2", max_length=WINDOW, settings=SETTINGS)
    export_task("muld/vlsp", vlsp_data, "lm-eval", folder, options)
    items = [json.loads(line) for line in (folder / "data/longread_muld_vlsp.jsonl").read_text().splitlines()]
    assert len(items) == 2
    assert all(item["prompt_exact"] and item["prompt_tokens"] == WINDOW - 16 for item in items)
    assert all(item["prompt"].endswith("\n\nAbstract:") for item in items)

    model = backend("smollm2")
    ours = HFBackend(model.loaded, spec="smollm2", max_length=WINDOW)
    run = tmp_path / "run"
    run_task(make_task("muld/vlsp", dict(SETTINGS)), vlsp_data, ours, run, RunOptions(show_progress=False))
    rows = {row["id"]: row for row in map(json.loads, (run / "samples.jsonl").read_text().splitlines())}
    assert all(
        row["sections_used"][0]["tokens_read"] == item["document_tokens_kept"]
        for row, item in zip((rows[item["id"]] for item in items), items, strict=True)
    )

    samples, results = _lm_eval(folder, model)
    theirs = {sample["doc"]["id"]: sample["resps"][0][0].strip() for sample in samples}
    assert theirs == {key: row["prediction"] for key, row in rows.items()}
    assert all(row["prediction"] for row in rows.values())
    overall = json.loads((run / "results.json").read_text())["overall"]["metrics"]
    for metric in ("rouge_l", "meteor", "token_f1", "bleu1", "bleu4"):
        assert results[f"{metric},none"] == pytest.approx(overall[metric]["value"], abs=1e-9), metric


def test_a_several_generation_setting_is_refused(vlsp_data: Path) -> None:
    model = backend("smollm2")
    from longread.models.hf.backend import HFTokenEncoder

    with pytest.raises(LongreadError, match="several generations per instance"):
        export_muld(
            "muld/vlsp", vlsp_data, HFTokenEncoder(model.tokenizer), "smollm2", WINDOW, {"mode": "sections"}
        )


def test_the_command_takes_the_window_and_task_settings(vlsp_data: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from longread.cli.app import app

    out = tmp_path / "out"
    command = ["export", "muld/vlsp", "--data", str(vlsp_data), "--to", "lm-eval", "--out", str(out)]
    command += [
        "--tokenizer",
        "smollm2",
        "--max-length",
        "300",
        "-o",
        "first_tokens=100",
        "-o",
        "summary_tokens=8",
    ]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    assert (
        "model window 300: 2 items, 2 documents cut to fit, 0 prompts not re-tokenising exactly"
        in result.output
    )
    yaml = (out / "longread_muld_vlsp.yaml").read_text()
    assert "  max_gen_toks: 8\n" in yaml and "output_type: generate_until" in yaml
    items = [json.loads(line) for line in (out / "data/longread_muld_vlsp.jsonl").read_text().splitlines()]
    assert [item["document_tokens_kept"] for item in items] == [100, 100]


@pytest.mark.parametrize("task", ["muld/hotpotqa", "muld/narrativeqa"])
def test_qa_tasks_lm_eval_generates_what_longread_generates(
    task: str, qa_data: dict[str, Path], tmp_path: Path
) -> None:
    """Every instance exported with longread's prompt (the retrieved chunks, then the question); lm-eval
    asks it, stopping at a newline, and its greedy answers and metrics are longread's own."""
    from lm_eval.tasks import get_task_dict

    settings = (("chunk_tokens", "128"), ("top_k", "2"), ("answer_tokens", "8"))
    folder = tmp_path / "lm-eval"
    export_task(
        task, qa_data[task], "lm-eval", folder, ExportOptions("smollm2", max_length=WINDOW, settings=settings)
    )
    name = "longread_" + task.replace("/", "_")
    items = [json.loads(line) for line in (folder / f"data/{name}.jsonl").read_text().splitlines()]
    loaded = make_task(task, dict(settings))
    instances = loaded.load(qa_data[task])
    assert [item["id"] for item in items] == [instance.id for instance in instances] != []
    for item, instance in zip(items, instances, strict=True):
        assert item["prompt"].endswith(f"\n\nQuestion: {instance.question}\nAnswer:")
        assert item["prompt_exact"] and item["prompt_tokens"] <= WINDOW - 8
        assert item["references"] == list(instance.references) and item["stop"] == ["\n"]
    lm_task = get_task_dict([name], task_manager(folder))[name]
    docs = list(lm_task.test_docs())
    assert [lm_task.doc_to_text(doc) for doc in docs] == [item["prompt"] for item in items]
    assert lm_task.config.generation_kwargs["until"] == ["\n"]
    assert lm_task.config.generation_kwargs["max_gen_toks"] == 8

    model = backend("smollm2")
    run = tmp_path / "run"
    ours = HFBackend(model.loaded, spec="smollm2", max_length=WINDOW)
    run_task(make_task(task, dict(settings)), qa_data[task], ours, run, RunOptions(show_progress=False))
    rows = {row["id"]: row for row in map(json.loads, (run / "samples.jsonl").read_text().splitlines())}
    assert {item["id"]: item["document_tokens_kept"] for item in items} == {
        key: row["document_tokens_read"] for key, row in rows.items()
    }
    samples, results = _lm_eval(folder, model, name)
    theirs = {sample["doc"]["id"]: sample["resps"][0][0].strip() for sample in samples}
    assert theirs == {key: row["prediction"] for key, row in rows.items()}
    assert any(row["prediction"] for row in rows.values())
    overall = json.loads((run / "results.json").read_text())["overall"]["metrics"]
    for metric in ("rouge_l", "meteor", "token_f1", "bleu1", "bleu4"):
        assert results[f"{metric},none"] == pytest.approx(overall[metric]["value"], abs=1e-9), metric


def test_the_whole_strategy_fills_the_window(vlsp_data: Path, tmp_path: Path) -> None:
    """`-o strategy=whole`: the paper cut by the window alone, the prompt the window less the answer."""
    options = ExportOptions(
        "smollm2", max_length=300, settings=(("strategy", "whole"), ("summary_tokens", "8"))
    )
    export_task("muld/vlsp", vlsp_data, "lm-eval", tmp_path / "out", options)
    lines = (tmp_path / "out/data/longread_muld_vlsp.jsonl").read_text().splitlines()
    items = [json.loads(line) for line in lines]
    assert len(items) == 2
    for item in items:
        assert item["prompt_tokens"] == 300 - 8  # longread's ids: the window less the answer's 8 tokens
        assert item["document_tokens_original"] > item["document_tokens_kept"] == 300 - 8 - 4
    # The second paper's kept tokens end in a newline, which "\n\nAbstract:" joins into one token when the
    # text is tokenised whole: no text gives longread's ids there, and the item says so (counted, not hidden).
    assert items[1]["prompt"].endswith("\n\n\nAbstract:")
    assert [item["prompt_exact"] for item in items] == [True, False]


def test_opensubtitles_whole_film_lm_eval_translates_what_longread_translates(
    subtitles_data: Path, tmp_path: Path
) -> None:
    """The film's subtitles fitted to an 80-token window less 16 for the translation (strategy=whole, the
    export's default), stopped at "\\n\\nEnglish:": lm-eval's greedy translation and its metrics are
    longread's; the chunk-by-chunk baseline is refused with the setting to use."""
    window, settings = 80, (("whole_output_tokens", "16"),)
    folder = tmp_path / "lm-eval"
    options = ExportOptions("smollm2", max_length=window, settings=settings)
    export_task("muld/opensubtitles", subtitles_data, "lm-eval", folder, options)
    name = "longread_muld_opensubtitles"
    (item,) = [json.loads(line) for line in (folder / f"data/{name}.jsonl").read_text().splitlines()]
    assert item["prompt_exact"] and item["prompt"].endswith("\n\nGerman:\n") and item["max_new_tokens"] == 16
    assert item["stop"] == ["\n\nEnglish:"]

    model = backend("smollm2")
    run = tmp_path / "run"
    ours = HFBackend(model.loaded, spec="smollm2", max_length=window)
    task = make_task("muld/opensubtitles", {"strategy": "whole", **dict(settings)})
    run_task(task, subtitles_data, ours, run, RunOptions(show_progress=False))
    (row,) = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    assert row["document_tokens_cut"] > 0 and row["prediction"]
    samples, results = _lm_eval(folder, model, name)
    assert [sample["resps"][0][0].strip() for sample in samples] == [row["prediction"]]
    overall = json.loads((run / "results.json").read_text())["overall"]["metrics"]
    for metric in ("rouge_l", "meteor", "token_f1", "bleu1", "bleu4"):
        assert results[f"{metric},none"] == pytest.approx(overall[metric]["value"], abs=1e-9), metric
    with pytest.raises(LongreadError, match="-o strategy=whole, the default of the export"):
        chunked = ExportOptions("smollm2", max_length=window, settings=(("strategy", "chunks"),))
        export_task("muld/opensubtitles", subtitles_data, "lm-eval", tmp_path / "chunks", chunked)
