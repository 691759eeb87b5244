"""The memory verdict: true, false or "cannot tell", by the rule and the intervals; min-k by its formula."""

from __future__ import annotations

import math

import pytest
import torch

from longread.metrics.accuracy import wilson_interval
from longread.probes.memory.passages import Passage
from longread.probes.memory.probes import min_k, min_k_count
from longread.probes.memory.rule import CANNOT_TELL, adjust_prior_tests, items_needed, judge
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
    held = {"cloze": _share(16, 30), "extraction_exact": _share(0, 44)}
    assert judge(held, rule)[0] is True
    unable = {"cloze": _share(0, 30, verdict=CANNOT_TELL), "extraction_exact": _share(0, 158)}
    verdict, clauses = judge(unable, rule)
    assert verdict is False and clauses[0].status == CANNOT_TELL  # the verdict rests on extraction
    assert judge({"cloze": _share(0, 30, verdict=CANNOT_TELL)}, rule)[0] == CANNOT_TELL  # nothing tells


def test_a_clause_holds_only_when_its_interval_reaches_the_threshold() -> None:
    """Both ends alike: 2 exact extractions in 20 reach 0.05 at the point (0.10) but the interval starts at
    0.028, so the book is not called remembered on them; 6 in 20 (from 0.145) is."""
    rule = "extraction_exact>=0.05"
    verdict, (clause,) = judge({"extraction_exact": _share(2, 20)}, rule)
    assert verdict == CANNOT_TELL and clause.status == "not ruled out"
    assert clause.ci_low is not None and clause.ci_low < 0.05
    assert clause.needed is not None and wilson_interval(round(0.1 * clause.needed), clause.needed)[0] >= 0.05
    assert "would establish it" in clause.text()
    assert judge({"extraction_exact": _share(6, 20)}, rule)[0] is True


def test_cannot_tell_never_hides_a_clause_that_holds() -> None:
    # 15 of 20 right (interval from 0.53) though most other answers named no one: it holds
    score = _share(15, 20, verdict=CANNOT_TELL)
    verdict, (clause,) = judge({"cloze": score}, "cloze>=0.3")
    assert verdict is True and clause.status == "holds"
    # 8 of 20 (interval from 0.22) does not hold, and the cloze could not tell
    assert judge({"cloze": _share(8, 20, verdict=CANNOT_TELL)}, "cloze>=0.3")[1][0].status == CANNOT_TELL


def test_the_ranked_cloze_holds_only_when_it_beats_the_name_prior() -> None:
    """25 of 30 right is well above 0.3 — but always naming the most frequent candidate gets 24 of 30 on
    the same passages (p = 1): no evidence the model remembers the book."""
    prior = {"most_frequent": 24 / 30, "over_most_frequent": 1 / 30, "most_frequent_p": 1.0}
    verdict, (clause,) = judge({"cloze-rank": _share(25, 30, **prior)}, "cloze-rank>=0.3")
    assert verdict == CANNOT_TELL and clause.status == "not ruled out" and "does not beat it" in clause.text()
    beaten = {"most_frequent": 0.1, "over_most_frequent": 0.73, "most_frequent_p": 1e-5}
    assert judge({"cloze-rank": _share(25, 30, **beaten)}, "cloze-rank>=0.3")[0] is True
    # the family's adjustment decides where it is given
    adjusted = {**beaten, "most_frequent_p_adjusted": 0.2}
    assert judge({"cloze-rank": _share(25, 30, **adjusted)}, "cloze-rank>=0.3")[0] == CANNOT_TELL
    assert adjust_prior_tests([{"most_frequent_p": 0.01}, {}, {"most_frequent_p": 0.04}]) == [
        pytest.approx(0.02),
        None,
        pytest.approx(0.04),
    ]


def test_items_needed_settles_the_clause_either_way() -> None:
    needed = items_needed(0, 44, 0.05)
    assert needed is not None and wilson_interval(0, needed)[1] < 0.05 <= wilson_interval(0, needed - 1)[1]
    at_rate = items_needed(1, 100, 0.05)  # 1% seen: how many at 1% bring the bound under 5%
    assert at_rate is not None and wilson_interval(round(at_rate / 100), at_rate)[1] < 0.05
    above = items_needed(6, 100, 0.05)  # 6% seen: how many at 6% bring the lower bound to 5%
    assert above is not None and wilson_interval(round(0.06 * above), above)[0] >= 0.05
    assert items_needed(5, 100, 0.05) is None  # the rate is the threshold: no count settles it


def test_min_k_is_the_mean_of_the_lowest_k_percent_of_token_logprobs() -> None:
    """Hand-computed on a short passage: log-softmax of one forward, the lowest ``int(len · k/100)`` (Shi et
    al.'s floor, at least one), their mean."""
    model = backend("smollm2")
    text = "It is a truth universally acknowledged, that a single man in possession of a good fortune."
    ids = model.encoder.encode_plain(text)
    start = model.encoder.start_token_id
    read = ([start] if start is not None else []) + ids
    with torch.inference_mode():
        logits = model.model(input_ids=torch.tensor([read])).logits[0].double()
    logprobs = torch.log_softmax(logits[:-1], dim=-1).gather(-1, torch.tensor(read[1:])[:, None])[:, 0]
    values = sorted(logprobs.tolist())
    assert min_k_count(19, 20.0) == 3 and min_k_count(19, 1.0) == 1  # ⌊3.8⌋; ⌊0.19⌋ → at least one
    assert int(len(values) * 0.2) != math.ceil(len(values) * 0.2)  # this passage tells floor from ceiling
    for percent in (20.0, 50.0, 100.0):
        k = max(1, int(len(values) * (percent / 100)))
        expected = sum(values[:k]) / k
        (line,) = min_k(model, [Passage("b", 0, 0, text)], percent)
        assert line["tokens"] == len(values)
        assert abs(line["score"] - expected) <= summed_logprob_tolerance(1)  # a mean: one token's
