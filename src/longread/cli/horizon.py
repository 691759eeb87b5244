"""``longread horizon``: how far back does a model read? One command for the used context and the copy
horizon that calibrates it, per model × prefix length, on the instances every model fitted.

The campaign (:mod:`longread.horizon`) writes every run under ``--out`` and resumes where it stopped
when run again; ``--dry-run`` prints the plan and its cost before any model loads. Writes
``horizon.md``/``.json``/``.png`` and the HTML page of every run (``html/index.html``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from longread.cli.ablate import show_report
from longread.cli.calibrate import CopyOption, LengthsOption, SeedOption, parse_counts
from longread.cli.eval import DataOption, LimitOption, SampleOption, SampleSeedOption, TaskArgument
from longread.cli.options import (
    DeviceOption,
    DtypeOption,
    MaxLengthOption,
    QuietOption,
    RayOption,
    RayWorkersOption,
    TaskSettingOption,
    ThreadsOption,
    backend_from_options,
    fail,
    parse_task_options,
    ray_for_command,
)
from longread.errors import LongreadError

if TYPE_CHECKING:
    from longread.horizon.plan import HorizonPlan

horizon_app = typer.Typer()

ModelsOption = Annotated[
    list[str],
    typer.Option(
        "--model",
        help="A model as `eval --model` takes it; repeat to compare models on the "
        "instances every one of them fitted.",
    ),
]
HorizonOutOption = Annotated[Path, typer.Option("--out", help="Folder for the runs and the report.")]
DeltaOption = Annotated[
    float,
    typer.Option(
        "--delta",
        help="The change of accuracy the used context's null is asked to rule out (where the data cannot, "
        "the page gives the bound they allow and what ruling out ±delta would take).",
    ),
]
ControlOption = Annotated[
    str, typer.Option("--control", help="What happens before the last K tokens: replace, shuffle or none.")
]
MinKeepOption = Annotated[int, typer.Option("--min-keep", help="The smallest K of the log grid before 0.")]
RefineOption = Annotated[int, typer.Option("--refine", help="Bisection steps where the answer changes.")]
SearchOption = Annotated[
    str,
    typer.Option(
        "--search",
        help="descend: the log grid down from L/2; zero-first: K = 0 first, and only where that is not a "
        "null the grid (saves the grid's runs where a model uses nothing before its last tokens).",
    ),
]
HorizonDistancesOption = Annotated[
    str,
    typer.Option(
        "--distances",
        help="Distances of the planted copy: 256,512 for every length, or "
        "1024:256,512;2048:512,1024 (default: L/4, L/2, 3L/4).",
    ),
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Print the plan and its cost, then exit (nothing loads).")
]


@horizon_app.command("horizon")
def horizon_command(
    task: TaskArgument,
    data: DataOption,
    model: ModelsOption,
    out: HorizonOutOption,
    prefix_lengths: LengthsOption = "1024,2048",
    delta: DeltaOption = 0.05,
    control: ControlOption = "replace",
    min_keep: MinKeepOption = 32,
    refine: RefineOption = 2,
    search: SearchOption = "descend",
    distances: HorizonDistancesOption = "",
    copy_tokens: CopyOption = 64,
    seed: SeedOption = 0,
    option: TaskSettingOption = None,
    sample: SampleOption = None,
    sample_seed: SampleSeedOption = 0,
    limit: LimitOption = None,
    dry_run: DryRunOption = False,
    device: DeviceOption = "cpu",
    dtype: DtypeOption = "float32",
    threads: ThreadsOption = None,
    max_length: MaxLengthOption = None,
    quiet: QuietOption = False,
    ray: RayOption = None,
    ray_workers: RayWorkersOption = None,
) -> None:
    """How far back does the model read? The used context (the fewest last tokens whose replacement leaves
    the answers unchanged, a null whose bound is stated against ±delta, searched over K) and the planted
    copy's horizon, per model × prefix length, with the calibration gate that licenses each sentence."""
    from longread.evaluation.runner import RunOptions
    from longread.horizon.benchmarks import horizon_task
    from longread.horizon.campaign import Campaign, check_models, check_out, planned_runs
    from longread.horizon.plan import estimate
    from longread.horizon.progress import CampaignProgress

    lengths = parse_counts(prefix_lengths, "--prefix-lengths")
    settings = parse_task_options(option or [])
    try:
        adapter = horizon_task(task, settings)
        plan = _plan(lengths, control, delta, min_keep, refine, search, distances, copy_tokens, seed)
        options = RunOptions(limit=limit, sample=sample, sample_seed=sample_seed, show_progress=not quiet)
        instances = adapter.choose(data, options, plan)
        check_models(model)
        check_out(out, adapter, instances)
    except LongreadError as exc:
        raise fail(exc) from None
    after = adapter.read_after(instances)
    costs = [cost for name in model for cost in estimate(plan, name, len(instances), after, out)]
    say = lambda text: typer.echo(text, err=True)  # noqa: E731
    _print_plan(say, plan, model, adapter, instances, costs, out)
    if dry_run:
        return
    progress = CampaignProgress(planned_runs(plan, len(model)), len(instances), say)
    try:
        with ray_for_command(ray, ray_workers) as on_ray:
            loader = _loader(device, dtype, threads, max_length, on_ray)
            campaign = Campaign(out, plan, model, adapter, instances, progress, show_progress=not quiet)
            record = campaign.run(loader)
            files = _report(out, record)
            spent = _cost(out, record)
    except KeyboardInterrupt:
        say(f"\ninterrupted: every finished sample is kept under {out}; run the same command to go on")
        raise typer.Exit(code=130) from None
    except LongreadError as exc:
        raise fail(exc) from None
    show_report(files[0], files, record.failed)
    say(f"what the campaign cost ({out / 'cost.json'}; not part of the answer: it depends on the machine):")
    for line in spent:
        say(f"  {line}")


def _plan(
    lengths: tuple[int, ...],
    control: str,
    delta: float,
    min_keep: int,
    refine: int,
    search: str,
    distances: str,
    copy_tokens: int,
    seed: int,
) -> HorizonPlan:
    """The campaign's plan from the command's options, checked (a bad option raises LongreadError)."""
    from longread.horizon.plan import HorizonPlan, check_plan, parse_distances

    plan = HorizonPlan(
        tuple(sorted(set(lengths))),
        control,
        delta,
        min_keep,
        refine,
        distances=parse_distances(distances, lengths),
        copy_tokens=copy_tokens,
        seed=seed,
        search=search,
    )
    check_plan(plan)
    return plan


def _loader(device: str, dtype: str, threads: int | None, max_length: int | None, on_ray: Any) -> Any:
    @contextmanager
    def load(name: str) -> Iterator[Any]:
        from longread.report.press_runs import hand_back_memory

        backend = backend_from_options(
            name,
            device=device,
            dtype=dtype,
            mode="shared",
            batch_size=8,
            prefill_chunk=512,
            threads=threads,
            max_length=max_length,
            ray=on_ray,
        )
        try:
            yield backend
        finally:
            for end in ("shutdown", "close"):
                method = getattr(backend, end, None)
                if callable(method):
                    method()
                    break
            del backend
            hand_back_memory()

    return load


def _report(out: Path, record: Any) -> tuple[Path, ...]:
    from longread.horizon.report import write_horizon
    from longread.horizon.verdicts import answers
    from longread.report.html import build_html_report

    found, families = answers(out, record)
    md, js, png = write_horizon(out, record, found, families)
    html = build_html_report(list(record.runs), out / "html")
    return md, js, png, html


def _cost(out: Path, record: Any) -> list[str]:
    from longread.horizon.cost import campaign_cost, cost_lines, write_cost

    spent = campaign_cost(out, record.runs, record.models, record.plan.prefix_lengths)
    write_cost(out, spent)
    return cost_lines(spent)


def _print_plan(
    say: Any, plan: Any, models: list[str], adapter: Any, instances: list[Any], costs: list[Any], out: Path
) -> None:
    from longread.horizon.cost import on_disk_lines
    from longread.horizon.plan import keep_grid
    from longread.progress import format_duration

    books = len({adapter.book_of(i) for i in instances})
    say(
        f"plan: {adapter.title}, {len(instances):,} {adapter.unit} from {books:,} books; "
        f"{plan.control} before the last K tokens; "
        f"δ = {plan.delta:g}; models {', '.join(models)}"
    )
    for length in plan.prefix_lengths:
        grid = ", ".join(f"{k:,}" for k in keep_grid(length, plan.min_keep))
        first = "K = 0 first (a null there is the answer), then " if plan.search == "zero-first" else ""
        planted = ", ".join(f"{d:,}" for d in plan.distances_at(length))
        say(
            f"  L = {length:,}: {first}K searched from {grid} (then {plan.refine} bisection steps); copy "
            f"planted at {planted}"
        )
    for cost in costs:
        say(
            f"  {cost.model} at L = {cost.length:,}: at most {cost.runs} runs, {cost.samples:,} samples, "
            f"{cost.tokens:,} tokens ≈ {format_duration(cost.seconds)} at {cost.rate:,.0f} tokens/s "
            f"({cost.rate_source})"
        )
    total = sum(c.seconds for c in costs)
    say(f"  at most ≈ {format_duration(total)} in all (the search stops early where the answer is found)")
    done = on_disk_lines(out, models, plan.prefix_lengths)
    if done:
        say(
            f"  already in {out} (a rerun reads them back and scores only what is missing; the bounds above "
            "are the whole campaign's):"
        )
        for line in done:
            say(f"    {line}")
