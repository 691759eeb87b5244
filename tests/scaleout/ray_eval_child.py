"""The Ray part of tests/scaleout/test_ray_eval.py, run in its own network namespace.

Arguments: DATA OUT. Makes, under OUT, ChapterBreak runs of a tiny random GPT-2 on DATA:

- ``one``: one process, 1 thread (what each Ray replica uses);
- ``ray``: Ray, 2 replicas;
- ``killed``: the same 2 replicas, one killed by ``ray.kill`` before the run's call 4;
- ``stopped``: the one replica left, killed before the run's call 4 (the run stops), then resumed on 2
  new replicas;
- ``strict_one`` / ``strict_ray``: without truncation (some samples fail), one process and Ray;
- ``shuffled_one`` / ``shuffled_ray``: the prefix shuffled beyond its last 16 tokens, one process and Ray;

- ``cal_one`` / ``cal_ray``: a calibration (a copy planted 128 tokens back, ``none`` at K 32 and 256), one
  process and Ray (the tokens counted by a replica);
- ``abl_one`` / ``abl_ray``: an ablation (``shuffle`` at K 16), one process and Ray;
- ``hz_one`` / ``hz_ray``: a horizon campaign (``shuffle`` searched on K 256, 128, a copy 128 tokens
  back, its gate), one process and Ray;

and tries replicas of a model that does not exist (report["bad_model"]: the error).

and writes OUT/report.json with what happened (calls, rescheduled requests, causes, wall times).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.errors import LongreadError
from longread.evaluation import RunOptions, run_task
from longread.evaluation.controls import ControlledTask, ControlSettings
from longread.models.errors import FatalBackendError
from longread.models.registry import load_backend
from longread.scaleout.ray_backend import RayBackend, wrap_with_ray
from longread.scaleout.ray_session import stop_ray

TINY = "random:gpt2"
KILL_BEFORE_CALL = 4
OPTIONS = RunOptions(show_progress=False, request_batch=2)
"""Two requests per call (one per replica) make enough calls for a kill to land mid-run."""


def make_task(*, truncate: bool = True) -> ChapterBreakTask:
    """Without truncation, a 2048-token prefix does not fit the tiny model's 1024-token window: an error."""
    settings = ChapterBreakSettings(prefix_lengths=(64, 256, 2048), suffix_tokens=24, truncate=truncate)
    return ChapterBreakTask(settings)


def shuffled() -> ControlledTask:
    return ControlledTask(make_task(), ControlSettings("shuffle", keep_last=16, seed=0))


def ray_backend() -> RayBackend:
    return wrap_with_ray(TINY, {"threads": 2}, workers=2)


def kill_before(backend: RayBackend, call: int, victims: list[Any]) -> None:
    def hook(number: int) -> None:
        if number == call:
            for actor in victims:
                backend.ray.kill(actor)

    backend.on_call = hook


def calibrate_and_ablate(data: Path, out: Path, one: Any, backend: RayBackend) -> None:
    """The same calibration and ablation in one process and on the replicas."""
    from longread.calibration.run import CalibrationPlan, run_calibration
    from longread.report.ablation import run_ablation

    def short() -> ChapterBreakTask:
        return ChapterBreakTask(ChapterBreakSettings(prefix_lengths=(512,), suffix_tokens=24))

    plan = CalibrationPlan(distances=(128,), controls=("none",), keep_last=(32, 256), copy_tokens=16, seed=0)
    for name, chosen in (("one", one), ("ray", backend)):
        run_calibration(short, data, chosen, out / f"cal_{name}", plan, OPTIONS, count=chosen.count_tokens)
        shuffle = [ControlSettings("shuffle", keep_last=16, seed=0)]
        run_ablation(short, data, chosen, out / f"abl_{name}", shuffle, OPTIONS)
        horizon(data, out / f"hz_{name}", chosen)


def horizon(data: Path, out: Path, backend: Any) -> None:
    """A small horizon campaign on one loaded backend (the one process's or the replicas)."""
    from longread.horizon.benchmarks import horizon_task
    from longread.horizon.campaign import Campaign
    from longread.horizon.plan import HorizonPlan
    from longread.horizon.progress import CampaignProgress
    from longread.horizon.report import write_horizon
    from longread.horizon.verdicts import answers

    @contextmanager
    def given(_: str) -> Iterator[Any]:
        yield backend

    plan = HorizonPlan((512,), "shuffle", min_keep=128, refine=1, distances={512: (128,)}, copy_tokens=16)
    task = horizon_task("chapterbreak", {"suffix_tokens": "24"})
    instances = task.choose(data, OPTIONS, plan)
    progress = CampaignProgress(8, len(instances), lambda _: None)
    campaign = Campaign(out, plan, ["tiny"], task, instances, progress, show_progress=False)
    record = campaign.run(given)
    write_horizon(out, record, *answers(out, record))


def main(data: Path, out: Path) -> None:
    report: dict[str, Any] = {}
    started = time.monotonic()
    one = load_backend(TINY, threads=1)
    run_task(make_task(), data, one, out / "one", OPTIONS)
    report["one_seconds"] = time.monotonic() - started
    run_task(make_task(truncate=False), data, one, out / "strict_one", OPTIONS)
    run_task(shuffled(), data, one, out / "shuffled_one", OPTIONS)  # type: ignore[arg-type]

    started = time.monotonic()
    backend = ray_backend()
    report["ray_start_seconds"] = time.monotonic() - started
    started = time.monotonic()
    run_task(make_task(), data, backend, out / "ray", OPTIONS)
    report["ray_seconds"] = time.monotonic() - started
    report["ray"] = {"calls": backend.calls, "rescheduled": backend.rescheduled, "live": len(backend.live)}
    run_task(shuffled(), data, backend, out / "shuffled_ray", OPTIONS)  # type: ignore[arg-type]

    # The same replicas go on: one is killed mid-run ...
    kill_before(backend, backend.calls + KILL_BEFORE_CALL, [backend.actors[1]])
    run_task(make_task(), data, backend, out / "killed", OPTIONS)
    report["killed"] = {
        "calls": backend.calls - report["ray"]["calls"],
        "rescheduled": backend.rescheduled,
        "live": len(backend.live),
        "lost": list(backend.lost_workers),
    }
    # ... then the last one: the run stops, and 2 new replicas resume it.
    kill_before(backend, backend.calls + KILL_BEFORE_CALL, [backend.actors[0]])
    try:
        run_task(make_task(), data, backend, out / "stopped", OPTIONS)
        report["stopped"] = {"error": None}
    except FatalBackendError as exc:
        rows = (out / "stopped" / "samples.jsonl").read_text().splitlines()
        report["stopped"] = {"error": str(exc), "rows_before_resume": len(rows)}
    backend = ray_backend()
    resumed = run_task(make_task(), data, backend, out / "stopped", replace(OPTIONS, resume=True))
    report["stopped"]["resumed_skipped_done"] = resumed.skipped_done
    # Requests that fail inside a replica fail their own samples only, with the one-process message.
    run_task(make_task(truncate=False), data, backend, out / "strict_ray", OPTIONS)
    calibrate_and_ablate(data, out, one, backend)
    backend.shutdown()
    try:
        wrap_with_ray("hf:/no/such/model", {"threads": 1}, workers=1)  # one replica says it as two would
        report["bad_model"] = None
    except LongreadError as exc:
        report["bad_model"] = str(exc)
    stop_ray()
    (out / "report.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
