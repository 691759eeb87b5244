"""``cost.json``: what a campaign's runs spent, summed over their sessions; a run whose timing cannot be
read is named, not dropped in silence."""

from __future__ import annotations

import json
from pathlib import Path

from longread.horizon.cost import campaign_cost, cost_lines
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
