"""The used-context sentence's error rate, measured on simulated campaigns of known truth (the campaign's
own search, intervals, Holm family and wording rule; bench/horizon_rule.py runs the whole grid): at most
5% (+ Monte Carlo error) wrong, where a naive "within ±0.05 means unchanged" rule on the same searches is
wrong far more often — the simulation sees an error when there is one."""

from __future__ import annotations

import numpy as np
import pytest

from longread.horizon.simulation import Cell, Reach, loss_per_user, naive_errs, replicate, truth
from longread.metrics.simulation import design

REPLICATES = 150
ALLOWED = 0.05 + 2 * np.sqrt(0.05 * 0.95 / REPLICATES)


@pytest.mark.parametrize(
    "reach",
    [Reach("near", 0.3, 0.3, 1, 128), Reach("step", 0.2, 0.3, 600, 600)],
    ids=["near", "step"],
)
def test_the_used_context_sentence_errs_at_most_five_percent(reach: Reach) -> None:
    cell = Cell(design(40, 5), 0.3, reach, heterogeneous=True)
    loss = loss_per_user(cell)
    rng = np.random.default_rng(3)
    outcomes = [replicate(rng, cell, loss) for _ in range(REPLICATES)]
    erred = np.mean([o.erred for o in outcomes])
    assert erred <= ALLOWED, f"the sentence erred in {erred:.3f} of {REPLICATES} pages"
    naive = np.mean([naive_errs(cell, o, loss) for o in outcomes])  # on the same searches
    assert naive > 0.15, f"the naive rule erred in only {naive:.3f}: the simulation sees no error"
    said = [o.said.used for o in outcomes if o.said.used is not None]
    assert said and np.median(said) > 0  # the pages found use: the rule is not right only by saying nothing


def test_the_truth_is_zero_from_the_reach_up_and_grows_below() -> None:
    cell = Cell(design(5, 4), 0.3, Reach("near", 0.3, 0.3, 1, 128), heterogeneous=False)
    loss = loss_per_user(cell)
    assert loss == pytest.approx(0.3 * 0.3, abs=0.01)  # p + 0.3 rarely passes 1 at base 0.3
    assert truth(cell, 128, loss) == 0 and truth(cell, 512, loss) == 0
    assert truth(cell, 64, loss) == pytest.approx(-loss * 64 / 127)  # R uniform on [1, 128]
    assert truth(cell, 0, loss) == pytest.approx(-loss)
