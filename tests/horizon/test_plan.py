"""What a horizon campaign plans before anything loads: refused settings, distances, cost and progress."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longread.horizon.plan import (
    REFERENCE_RATES,
    HorizonPlan,
    HorizonPlanError,
    check_plan,
    default_distances,
    estimate,
    parse_distances,
)
from longread.horizon.progress import CampaignProgress


def test_default_distances_are_the_quarters_a_prefix_holds() -> None:
    assert default_distances(2048, 64) == (512, 1024, 1536)
    assert default_distances(192, 32) == (48, 96)  # 144 would start past the prefix with its 64 of slack


@pytest.mark.parametrize(
    ("plan", "words"),
    [
        (HorizonPlan((1024,), control="intact"), "--control takes shuffle, replace or none"),
        (HorizonPlan((1024,), delta=0), "--delta is a difference"),
        (HorizonPlan((48,)), "at least twice --min-keep"),
        (HorizonPlan((1024,), distances={1024: (1000,)}), "distance 1000 does not fit a prefix of 1024"),
        (HorizonPlan((1024,), copy_tokens=0), "--copy-tokens"),
    ],
)
def test_a_plan_that_cannot_answer_is_refused_naming_the_setting(plan: HorizonPlan, words: str) -> None:
    with pytest.raises(HorizonPlanError, match=words):
        check_plan(plan)


def test_distances_for_every_length_or_per_length() -> None:
    assert parse_distances("512,256", (1024, 2048)) == {1024: (256, 512), 2048: (256, 512)}
    assert parse_distances("1024:256;2048:512,1024", (1024, 2048)) == {1024: (256,), 2048: (512, 1024)}
    for bad in ("1024:", "x", "4096:512", ","):
        with pytest.raises(HorizonPlanError):
            parse_distances(bad, (1024, 2048))


def test_the_cost_uses_the_models_earlier_runs_else_the_reference_rate(tmp_path: Path) -> None:
    plan = HorizonPlan((1024,), min_keep=256, refine=1)  # K: 512, 256, 0; 3 distances
    (cost,) = estimate(plan, "smollm2", 100, 6 * 128, tmp_path)
    assert cost.runs == (1 + 3 + 1) + (3 + 1)  # intact, grid, refinement; planted runs, gate
    assert cost.samples == 900 and cost.tokens == 900 * (1024 + 6 * 128)
    assert cost.rate == REFERENCE_RATES["smollm2"] and "reference" in cost.rate_source
    run = tmp_path / "smollm2" / "L1024" / "intact"
    run.mkdir(parents=True)
    (run / "timing.json").write_text(json.dumps({"total": {"tokens": 50_000, "wall_time_s": 100.0}}))
    (measured,) = estimate(plan, "smollm2", 100, 6 * 128, tmp_path)
    assert measured.rate == 500.0 and measured.seconds == measured.tokens / 500.0
    assert str(tmp_path) in measured.rate_source
    # A session starved by other jobs (14 tokens/s) or one that only loaded the model (10 tokens in 5 s)
    # does not set the estimate: the median session by tokens read does.
    sessions = [
        {"tokens": 48_000, "wall_time_s": 100.0},
        {"tokens": 1_400, "wall_time_s": 100.0},
        {"tokens": 10, "wall_time_s": 5.0},
        {"tokens": 1_000, "wall_time_s": 10.0},
    ]
    planted = tmp_path / "smollm2" / "L1024" / "planted-d256" / "intact"
    planted.mkdir(parents=True)
    (planted / "timing.json").write_text(json.dumps({"sessions": sessions, "total": {}}))
    (median,) = estimate(plan, "smollm2", 100, 6 * 128, tmp_path)
    assert median.rate == 480.0 and "median of 5 earlier session(s)" in median.rate_source


def test_progress_names_each_run_and_gives_the_campaigns_rate_and_an_upper_eta() -> None:
    said: list[str] = []
    now = [0.0]
    progress = CampaignProgress(5, 10, said.append, clock=lambda: now[0])
    progress.start("smollm2/L1024/intact")
    now[0] = 60.0
    progress.finish("smollm2/L1024/intact", 10, 0)
    assert said[0] == "[run 1 of at most 5] smollm2/L1024/intact"
    assert "10 scored, 0 already done, 1m00s" in said[1]
    assert "10.0 samples/min" in said[1] and "at most 4 run(s) left, ETA ≤ 4m00s" in said[1]


def test_model_folders_name_the_model_not_its_runtime_settings() -> None:
    from longread.horizon.layout import model_folder

    assert model_folder("smollm2") == "smollm2"
    assert model_folder("gguf:/models/SmolLM2.Q8_0.gguf") == "SmolLM2.Q8_0.gguf"
    served = "openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-0.5B"
    assert model_folder(served) == model_folder(served + "?concurrency=4&timeout=60") == "Qwen-Qwen2.5-0.5B"
