"""`report RUN_A RUN_B --group-by …`: the paired difference on shared instances, checked by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.evaluation import RunOptions, run_task
from longread.metrics.tango import tango_interval
from longread.report import build_report
from tests.fake_backends import ScriptedLM
from tests.helpers import write_negative_variants

TASK = ChapterBreakTask(ChapterBreakSettings(prefix_lengths=(32,), suffix_tokens=16))
FIRST = [True, True, True, False, False, False, False, False]
LATER = [True, False, True, True, True, True, True, False]


def _runs(tmp_path: Path) -> tuple[Path, Path]:
    """In-book and out-of-book runs of the same three books, on the same 9 boundaries."""
    in_data, out_data = write_negative_variants(tmp_path)
    first, later = tmp_path / "in-book", tmp_path / "out-of-book"
    run_task(TASK, in_data, ScriptedLM(), first, RunOptions(show_progress=False))
    options = RunOptions(show_progress=False, same_samples_as=first)
    run_task(TASK, out_data, ScriptedLM(), later, options)
    return first, later


def _set_correct(
    run: Path, by_pair: dict[str, bool], drop: set[str] = frozenset()
) -> list[dict[str, object]]:
    """Give the stored rows the outcomes of the constructed comparison (``drop``: rows removed)."""
    rows = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    kept = [{**row, "correct": by_pair[row["pair_id"]]} for row in rows if row["pair_id"] not in drop]
    (run / "samples.jsonl").write_text("".join(json.dumps(row) + "\n" for row in kept))
    return kept


def test_paired_difference_matches_a_hand_computation(tmp_path: Path) -> None:
    first, later = _runs(tmp_path)
    pairs = [json.loads(line)["pair_id"] for line in (first / "samples.jsonl").read_text().splitlines()]
    assert len(pairs) == 9 == len(set(pairs))
    shared, left_out = pairs[:8], pairs[8]
    _set_correct(first, {**dict(zip(shared, FIRST, strict=True)), left_out: True})
    _set_correct(later, dict(zip(shared, LATER, strict=True)), drop={left_out})

    files = build_report([first, later], tmp_path / "report", group_by=["negatives_from"])
    (paired,) = files.paired
    # By hand: 8 shared instances, 1 of the first run's without a partner.
    assert (paired.paired, paired.unmatched_first, paired.unmatched_later) == (8, 1, 0)
    assert paired.groups == "in-book → out-of-book" and paired.x == 32
    assert paired.value_first == pytest.approx(3 / 8) and paired.value_later == pytest.approx(6 / 8)
    assert paired.difference == pytest.approx(3 / 8)
    # Discordant: 1 only the first run got right, 4 only the later; exact two-sided McNemar:
    # 2 · P(X ≤ 1), X ~ Binomial(5, 1/2) = 2 · (1 + 5) / 32.
    assert (paired.only_first, paired.only_later) == (1, 4)
    assert paired.mcnemar_p == pytest.approx(2 * (1 + 5) / 32)
    # The rows name three books: too few for an interval that speaks for books (docs/statistics.md), so
    # the interval is Tango's on the 8 instances and nothing is claimed at the book level.
    assert paired.books == 3 and paired.too_few_books and paired.level == "instances"
    assert (paired.ci_low, paired.ci_high) == pytest.approx(tango_interval(1, 4, 8))
    assert paired.p == paired.mcnemar_p
    assert paired.ci_low < paired.difference < paired.ci_high

    markdown = files.markdown.read_text()
    assert "Paired, instance by instance:" in markdown
    line = next(line for line in markdown.splitlines() if "in-book → out-of-book" in line)
    assert "| 8 | 1 / 0 | 37.5 | 75.0 | +37.5 [" in line and "| 1 / 4 | 0.375 |" in line
    stored = json.loads((tmp_path / "report" / "report.json").read_text())
    (entry,) = stored["paired"]
    assert entry["paired"] == 8 and entry["mcnemar_p"] == pytest.approx(0.375)
    assert entry["unmatched_first"] == 1 and stored["group_by"] == ["negatives_from"]
    assert not math.isnan(entry["ci_low"])


def test_a_corpus_level_metric_is_computed_again_on_each_leave_out() -> None:
    from longread.metrics.paired import paired_corpus_scores, paired_scores

    rng = np.random.default_rng(5)
    a, b = list(rng.normal(0.4, 0.2, 40)), list(rng.normal(0.5, 0.2, 40))
    mean = lambda rows: float(np.mean(rows))  # noqa: E731 — a corpus metric that is a mean: same as per item
    corpus, per_item = paired_corpus_scores(a, b, mean), paired_scores(a, b)
    assert corpus.difference == pytest.approx(per_item.difference, abs=1e-12)
    assert (corpus.ci_low, corpus.ci_high) == pytest.approx((per_item.ci_low, per_item.ci_high), abs=1e-9)
    # a ratio of sums is not a mean of ratios: the corpus value is the metric on all rows, not averaged
    pairs_a, pairs_b = [(1, 2), (0, 8), (3, 3)], [(2, 2), (1, 8), (3, 3)]
    ratio = lambda rows: sum(x for x, _ in rows) / sum(y for _, y in rows)  # noqa: E731
    scores = paired_corpus_scores(pairs_a, pairs_b, ratio)  # type: ignore[arg-type]
    assert (scores.mean_a, scores.mean_b) == (4 / 13, 6 / 13) and scores.difference == pytest.approx(2 / 13)
    assert scores.ci_low <= scores.difference <= scores.ci_high and scores.mcnemar_p is None
    same = paired_corpus_scores(pairs_a, pairs_a, ratio)  # type: ignore[arg-type]
    assert (same.difference, same.ci_low, same.ci_high) == (0.0, 0.0, 0.0)


def test_a_comparison_pooled_over_x_pairs_each_instance_once() -> None:
    """An instance asked at four prefix lengths is one pair of the pooled row: its mean over them (the
    share it got right), not four pairs counted as independent."""
    from longread.report.paired import _per_instance, _Scored

    def scored(instance: str, x: int, value: bool) -> _Scored:
        return _Scored(f"{instance}@{x}", (instance, x), "all", "all", "book", instance, None, value)

    pairs = [
        (scored(i, x, True), scored(i, x, x < 1024 or i == "b"))
        for i in ("a", "b")
        for x in (256, 512, 1024, 2048)
    ]
    pooled = _per_instance(pairs)
    assert len(pooled) == 2
    assert [(first.value, later.value) for first, later in pooled] == [(1.0, 0.5), (1.0, 1.0)]
