"""``--target-effect``: the sample a null of ±D needs, from a pilot's report or from shares of change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer

from longread.cli.planning import plan_text


def test_without_a_pilot_the_plan_is_by_share_of_changed_answers(tmp_path: Path) -> None:
    text = plan_text(tmp_path / "context_use.json", 0.05, 20)
    assert "no pilot" in text and "154 if 10% change" in text and "this run plans 20 instances" in text


def test_a_pilot_report_decides_by_its_widest_comparison(tmp_path: Path) -> None:
    report = tmp_path / "presses.json"
    rows = [
        {"paired": 20, "ci_low": -0.2, "ci_high": 0.2, "books": 5, "level": "books"},
        {"paired": 20, "ci_low": -0.1, "ci_high": 0.1, "books": 5, "level": "books"},
        {"paired": 20, "ci_low": None, "ci_high": None},
    ]
    report.write_text(json.dumps({"rows": rows}), encoding="utf-8")
    text = plan_text(report, 0.05, None)
    assert "2 comparisons" in text and "about 320 paired instances and about 80 books" in text
    with pytest.raises(typer.BadParameter):
        plan_text(report, 1.5, None)
