"""lm-evaluation-harness on the exported NarrativeXL read-along items scores what longread scores.

longread's comparable path is the task's log-likelihood request path: ``longread eval narrativexl -o
window=N`` on a backend without read-along gets the scenes read so far joined, plus the prompt, cut
from the left to N tokens (policy ``cut-left``). Here that backend is SmolLM2 (fp32, CPU) with its
read-along hidden (:class:`LoglikelihoodOnly`), so the runner sends the task's own
``LoglikelihoodRequest``s through the local backend's ``loglikelihood``. lm-eval (the pinned version,
offline, in-process, the same weights) runs the exported task at the same N. Every option's log-prob
agrees within the summed-log-prob tolerance, and each question's ``acc`` (summed log-prob) and
``acc_mean`` (mean per token, longread's default) equal longread's — the true option is last, so a tie
is wrong in both.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from longread.benchmarks.narrativexl.task import NarrativeXLSettings, NarrativeXLTask
from longread.evaluation import RunOptions, run_task
from longread.export import ExportOptions, export_task
from longread.models.requests import READ_ALONG
from tests.export.lm_eval_tasks import task_manager
from tests.models_fixtures import backend
from tests.tolerances import summed_logprob_tolerance

pytestmark = pytest.mark.slow
LENGTHS = (128,)
"""One window that cuts every question's context (two windows cost twice and compared nothing more; 128
reads two thirds of what 192 did, and cuts as many)."""


class LoglikelihoodOnly:
    """A local backend as a backend without read-along (a served model's) is: it answers the same
    requests with the same weights, but the runner no longer finds ``read_along`` among its capabilities."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.capabilities = frozenset(inner.capabilities) - {READ_ALONG}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _longread_rows(data: Path, length: int, model: Any, run: Path) -> dict[str, dict[str, Any]]:
    task = NarrativeXLTask(NarrativeXLSettings(window=length))
    run_task(task, data, LoglikelihoodOnly(model), run, RunOptions(show_progress=False))
    rows = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    assert all(row["policy"] == f"cut-left(window={length})" for row in rows)
    return {row["id"]: row for row in rows}


def test_lm_eval_equals_longread_on_readalong(narrativexl_build: Path, tmp_path: Path) -> None:
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM

    folder = tmp_path / "lm-eval"
    report = export_task(
        "narrativexl", narrativexl_build, "lm-eval", folder, ExportOptions("smollm2", LENGTHS)
    )
    counts = report.facts.counts
    assert all(counts[length]["context_cut"] == 9 for length in LENGTHS)
    assert all(c["context_inexact"] == 0 for c in counts.values())

    model = backend("smollm2")
    started = time.perf_counter()
    ours = {
        length: _longread_rows(narrativexl_build, length, model, tmp_path / f"run-{length}")
        for length in LENGTHS
    }
    longread_seconds = time.perf_counter() - started
    lm = HFLM(pretrained=model.model, tokenizer=model.tokenizer, batch_size=1, device="cpu")
    names = [f"longread_narrativexl_{length}" for length in LENGTHS]
    started = time.perf_counter()
    output = simple_evaluate(model=lm, tasks=names, task_manager=task_manager(folder), log_samples=True)
    lm_eval_seconds = time.perf_counter() - started
    assert output is not None
    worst, compared = 0.0, 0
    for length in LENGTHS:
        samples = output["samples"][f"longread_narrativexl_{length}"]
        rows = ours[length]
        assert sorted(s["doc"]["id"] for s in samples) == sorted(rows) and len(rows) == 9
        for sample in samples:
            doc, row = sample["doc"], rows[sample["doc"]["id"]]
            order = doc["option_order"]
            assert row["tokens_seen"] == doc["context_tokens"]
            assert doc["choice_tokens"] == [row["option_tokens"][k] for k in order]
            theirs = [float(resp[0]) for resp in sample["filtered_resps"]]
            for their, k in zip(theirs, order, strict=True):
                mine, n = row["option_logprobs"][k], row["option_tokens"][k]
                assert abs(mine - their) <= summed_logprob_tolerance(n), (doc["id"], length, mine, their)
                worst = max(worst, abs(mine - their))
                compared += 1
            assert bool(sample["acc"]) == row["correct_sum"], (doc["id"], length)
            assert bool(sample["acc_mean"]) == row["correct_mean"] == row["correct"], (doc["id"], length)
        results = output["results"][f"longread_narrativexl_{length}"]
        assert results["acc_mean,none"] == pytest.approx(
            sum(r["correct_mean"] for r in rows.values()) / 9, abs=0
        )
        assert results["acc,none"] == pytest.approx(sum(r["correct_sum"] for r in rows.values()) / 9, abs=0)
    print(
        f"\nnarrativexl lm-eval vs longread (cut-left): {compared} log-probs, max |Δ| {worst:.2e} nats; "
        f"wall time lm-eval {lm_eval_seconds:.1f} s, longread {longread_seconds:.1f} s"
    )
