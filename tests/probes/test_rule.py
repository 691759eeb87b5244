"""The memory verdict: true, false or "cannot tell", by the rule and the intervals; min-k by its formula."""

from __future__ import annotations

import math

import pytest
import torch

from longread.metrics.accuracy import wilson_interval
from longread.probes.memory.passages import Passage
from longread.probes.memory.probes import min_k
from longread.probes.memory.rule import CANNOT_TELL, items_needed, judge
from tests.models_fixtures import backend
from tests.tolerances import summed_logprob_tolerance


def _share(count: int, n: int, **extra: object) -> dict[str, object]:
    low, high = wilson_interval(count, n)
    return {"value": count / n, "ci_low": low, "ci_high": high, "n": n, "count": count, **extra}


def test_false_only_when_every_clause_is_ruled_out_by_its_interval() -> None:
    rule = "cloze>=0.3,extraction_exact>=0.05"
    ruled_out = {"cloze": _share(0, 30), "extraction_exact": _share(0, 158)}
    verdict, clauses = judge(ruled_out, rule)
    assert verdict is False and [c.status for c in clauses] == ["ruled out", "ruled out"]
    assert clauses[1].ci_high == pytest.approx(0.0237, abs=5e-4)  # "below 2.4% (95%)" in 158 places
    short = {"cloze": _share(0, 30), "extraction_exact": _share(0, 44)}
    verdict, clauses = judge(short, rule)
    assert verdict == CANNOT_TELL and clauses[1].status == "not ruled out" and clauses[1].needed == 73
    held = {"cloze": _share(10, 30), "extraction_exact": _share(0, 44)}
    assert judge(held, rule)[0] is True
    unable = {"cloze": _share(0, 30, verdict=CANNOT_TELL), "extraction_exact": _share(0, 158)}
    verdict, clauses = judge(unable, rule)
    assert verdict is False and clauses[0].status == CANNOT_TELL  # the verdict rests on extraction
    assert judge({"cloze": _share(0, 30, verdict=CANNOT_TELL)}, rule)[0] == CANNOT_TELL  # nothing tells


def test_items_needed_is_the_fewest_that_bring_the_upper_bound_below() -> None:
    needed = items_needed(0, 44, 0.05)
    assert needed is not None and wilson_interval(0, needed)[1] < 0.05 <= wilson_interval(0, needed - 1)[1]
    at_rate = items_needed(1, 100, 0.05)  # 1% seen: how many at 1% bring the bound under 5%
    assert at_rate is not None and wilson_interval(round(at_rate / 100), at_rate)[1] < 0.05
    assert items_needed(6, 100, 0.05) is None  # the rate itself reaches the threshold


def test_min_k_is_the_mean_of_the_lowest_k_percent_of_token_logprobs() -> None:
    """Hand-computed on a short passage: log-softmax of one forward, the ⌈k%⌉ lowest, their mean."""
    model = backend("smollm2")
    text = "It is a truth universally acknowledged, that a single man in possession of a good fortune."
    ids = model.encoder.encode_plain(text)
    start = model.encoder.start_token_id
    read = ([start] if start is not None else []) + ids
    with torch.inference_mode():
        logits = model.model(input_ids=torch.tensor([read])).logits[0].double()
    logprobs = torch.log_softmax(logits[:-1], dim=-1).gather(-1, torch.tensor(read[1:])[:, None])[:, 0]
    values = sorted(logprobs.tolist())
    for percent in (20.0, 50.0, 100.0):
        k = math.ceil(len(values) * percent / 100)
        expected = sum(values[:k]) / k
        (line,) = min_k(model, [Passage("b", 0, 0, text)], percent)
        assert line["tokens"] == len(values)
        assert abs(line["score"] - expected) <= summed_logprob_tolerance(1)  # a mean: one token's
