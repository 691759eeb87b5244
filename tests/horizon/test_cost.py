"""``cost.json``: what a campaign's runs spent, summed over their sessions; a run whose timing cannot be
read is named, not dropped in silence."""

from __future__ import annotations

import json
from pathlib import Path

from longread.horizon.cost import campaign_cost, cost_lines, on_disk_lines
from longread.horizon.layout import length_dir


def _session(samples: int, tokens: int, seconds: float, threads: str) -> dict[str, object]:
    return {
        "samples": samples,
        "tokens": tokens,
        "wall_time_s": seconds,
        "runtime": {"backend": {"threads": threads}},
    }


def test_sessions_are_summed_per_model_and_length_and_an_unreadable_timing_is_named(tmp_path: Path) -> None:
    runs = []
    for name, sessions in {"intact": [_session(10, 1000, 4.0, "1"), _session(5, 500, 1.0, "2")],
                           "replace-k32": [_session(15, 1500, 5.0, "1")]}.items():  # fmt: skip
        run = length_dir(tmp_path, "smollm2", 192) / name
        run.mkdir(parents=True)
        (run / "timing.json").write_text(json.dumps({"sessions": sessions}))
        runs.append(run)
    broken = length_dir(tmp_path, "smollm2", 384) / "intact"
    broken.mkdir(parents=True)
    (broken / "timing.json").write_text("{not json")
    runs.append(broken)
    short, long = campaign_cost(tmp_path, runs, ["smollm2"], [192, 384])
    assert (short.runs, short.samples, short.tokens, short.seconds, short.threads) == (
        2,
        30,
        3000,
        10.0,
        ["1", "2"],
    )
    assert short.rate == 300.0 and short.untimed == []
    assert (long.runs, long.samples, long.seconds, long.rate) == (1, 0, 0.0, None) and len(long.untimed) == 1
    lines = cost_lines([short, long])
    assert (
        lines[0].startswith("smollm2 at L = 192: 2 runs, 30 samples, 3,000 tokens")
        and "threads 1/2" in lines[0]
    )
    assert "not timed, counted in no sum" in lines[1] and str(broken) in lines[1]


def test_what_is_on_disk_is_named_per_model_and_length_with_the_runs_not_finished(tmp_path: Path) -> None:
    runs = [("smollm2", "intact", True), ("smollm2", "replace-k0", False),
            ("smollm2", "planted-d64/intact", True), ("gemma3", "intact", True)]  # fmt: skip
    for model, name, finished in runs:
        run = length_dir(tmp_path, model, 192) / name
        run.mkdir(parents=True)
        (run / "timing.json").write_text(json.dumps({"sessions": [_session(4, 400, 2.0, "1")]}))
        if finished:
            (run / "results.json").write_text("{}")
    assert on_disk_lines(tmp_path / "elsewhere", ["smollm2"], [192]) == []  # nothing there: no line
    lines = on_disk_lines(tmp_path, ["smollm2", "gemma3", "other"], [192, 384])
    assert lines == [
        "smollm2 at L = 192: 3 runs, 12 samples, 1,200 tokens in 6s (200 tokens/s; threads 1); "
        "1 of them not finished",
        "gemma3 at L = 192: 1 runs, 4 samples, 400 tokens in 2s (200 tokens/s; threads 1)",
    ]  # neither L = 384 nor a model without runs gets a line; gemma3's run is not smollm2's
