"""Reports: the markdown table carries each run's numbers; the plot is a real PNG."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path

import pytest

from longread.errors import LongreadError
from longread.metrics import AccuracySummary
from longread.progress import Progress, format_duration
from longread.report import ReportInputError, build_report, format_table, load_runs
from longread.runs import RunDir, make_run_config

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def make_run(
    root: Path,
    name: str,
    model: str,
    correct_by_length: dict[int, int],
    n: int = 40,
    with_samples: bool = False,
    settings: dict[str, object] | None = None,
) -> Path:
    data = root / "chapterbreak.jsonl"
    data.write_text('{"id": "x"}\n', encoding="utf-8")
    config = make_run_config(
        task="chapterbreak",
        model={"name": model},
        data_path=data,
        settings={"prefixes": list(correct_by_length), **(settings or {})},
    )
    with RunDir.create(root / name, config, resume=False) as run:
        if with_samples:
            for length, correct in correct_by_length.items():
                for i in range(n):
                    run.append({"key": f"{i}@{length}", "prefix_length": length, "correct": i < correct})
            run.write_results({"task": "chapterbreak", "model": model, "chance": 1 / 6})
        else:
            by_length = {
                str(length): {
                    **AccuracySummary.from_counts(correct, n).as_dict(),
                    "word_perplexity": 40.0 - length / 1000,
                    "truncated_prefix": 0,
                    "unknown_extra": "ignored",
                }
                for length, correct in correct_by_length.items()
            }
            run.write_results(
                {"task": "chapterbreak", "model": model, "chance": 1 / 6, "by_prefix_length": by_length}
            )
    return root / name


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_report_writes_table_and_png(tmp_path: Path) -> None:
    lengths = [256, 512, 1024, 2048, 4096, 8192]
    runs = [
        make_run(tmp_path, "small", "smollm2", dict(zip(lengths, [9, 9, 10, 11, 10, 12], strict=True))),
        make_run(tmp_path, "gpt2", "gpt2-xl", dict(zip(lengths, [8, 9, 9, 10, 10, 9], strict=True))),
        make_run(tmp_path, "suffixlm", "suffixlm", dict(zip(lengths, [14, 16, 18, 19, 21, 22], strict=True))),
    ]
    files = build_report(runs, tmp_path / "report")

    width, height = png_size(files.plot.read_bytes())
    assert 800 <= width <= 2000 and 500 <= height <= 1500
    assert files.plot.stat().st_size > 20_000
    markdown = files.markdown.read_text(encoding="utf-8")
    assert files.table in markdown and "memory_curve.png" in markdown
    assert "chance 16.7% (1 in 6)" in markdown
    assert "| suffixlm | 8K | 40 | 55.0 [39.8–69.3] | 31.8 | 0 |" in files.table
    assert "| smollm2 | 256 | 40 | 22.5 [12.3–37.5] | 39.7 | 0 |" in files.table
    assert len(files.table.splitlines()) == 2 + 3 * len(lengths)


def test_report_from_samples_when_results_lack_the_table(tmp_path: Path) -> None:
    from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
    from longread.benchmarks.chapterbreak.io import write_instances
    from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
    from longread.evaluation import RunOptions, run_task
    from tests.fake_backends import ScriptedLM
    from tests.helpers import synthetic_book

    data = tmp_path / "cb.jsonl"
    write_instances(build_book(synthetic_book(9), BuildOptions(prefix_tokens=300)).instances, data)
    task = ChapterBreakTask(ChapterBreakSettings(prefix_lengths=(32, 64)))
    outcome = run_task(task, data, ScriptedLM(), tmp_path / "run", RunOptions(show_progress=False))
    results_file = tmp_path / "run" / "results.json"
    results_file.write_text(json.dumps({"task": "chapterbreak", "model": "scripted"}))  # the table is lost
    (loaded,) = load_runs([tmp_path / "run"])
    expected = outcome.results["by_x"]["64"]["metrics"]["accuracy"]
    accuracy = loaded.metric(64, "accuracy")
    assert accuracy is not None and (accuracy.successes, accuracy.n) == (expected["successes"], expected["n"])
    assert "| scripted | 64 | 3 |" in format_table([loaded])


def test_same_model_twice_gets_told_apart(tmp_path: Path) -> None:
    first = make_run(tmp_path, "seed0", "smollm2", {256: 9})
    second = make_run(tmp_path, "seed1", "smollm2", {256: 10})
    assert [run.label for run in load_runs([first, second])] == ["smollm2 (seed0)", "smollm2 (seed1)"]


def test_missing_results_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReportInputError, match=r"results\.json: not found"):
        load_runs([tmp_path])


def test_progress_prints_lines_when_not_a_terminal() -> None:
    now = [0.0]
    stream = io.StringIO()
    with Progress(
        total=10, desc="cb", unit="inst", initial=2, stream=stream, interval_s=5, clock=lambda: now[0]
    ) as p:
        for _ in range(4):
            now[0] += 2.0
            p.update(items=1, tokens=1000)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "cb: 5/10 inst (50.0%), 0.50 inst/s, 500 tok/s, elapsed 6s, ETA 10s"
    assert lines[-1].startswith("cb: 6/10 inst (60.0%)")
    assert len(lines) == 2
    assert format_duration(3725) == "1h02m"
    # Work beyond the plan (a retried generation) raises the total rather than passing 100%.
    with Progress(total=2, unit="gen", stream=stream, interval_s=0, clock=lambda: now[0]) as retried:
        retried.update(items=3)
    assert retried.total == 3 and stream.getvalue().splitlines()[-1].startswith("3/3 gen (100.0%)")


def test_group_by_compares_variants_side_by_side(tmp_path: Path) -> None:
    from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
    from longread.benchmarks.chapterbreak.io import write_instances
    from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
    from longread.evaluation import RunOptions, run_task
    from tests.fake_backends import ScriptedLM
    from tests.helpers import synthetic_book

    runs = []
    for name, chapters in (("short", 9), ("long", 12)):
        data = tmp_path / f"{name}.jsonl"
        instances = build_book(
            synthetic_book(chapters, book_id=name), BuildOptions(prefix_tokens=300)
        ).instances
        write_instances(instances, data)
        task = ChapterBreakTask(ChapterBreakSettings(prefix_lengths=(32, 64)))
        run_task(task, data, ScriptedLM(), tmp_path / name, RunOptions(show_progress=False))
        runs.append(tmp_path / name)
    files = build_report(runs, tmp_path / "report", group_by=["book_id", "negatives_from"])
    grouped = files.table.split("\n\n")[-1].splitlines()
    assert grouped[0] == "| model | book_id / negatives_from | 32 | 64 |"
    assert [line.split(" | ")[1] for line in grouped[2:]] == ["short / in-book", "long / in-book"]
    assert "(n=3)" in grouped[2] and "(n=6)" in grouped[3]
    assert files.grouped_plot == tmp_path / "report" / "memory_curve_by_book_id_negatives_from.png"
    assert files.grouped_plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "memory_curve_by_book_id_negatives_from.png" in files.markdown.read_text()
    with pytest.raises(LongreadError, match="rows have no field 'genre'"):
        build_report(runs, tmp_path / "report2", group_by=["genre"])


def test_an_options_only_run_is_named_and_drawn_as_a_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import longread.report.plot as plot_module

    baseline = make_run(tmp_path, "oo", "smollm2", {256: 7}, settings={"options_only": True})
    plain = make_run(tmp_path, "plain", "smollm2", {256: 9}, settings={"options_only": False})
    reports = load_runs([baseline, plain])
    assert [r.baseline for r in reports] == ["options only", None]
    assert [r.label for r in reports] == ["smollm2 (options only)", "smollm2"]
    drawn: list[plot_module.Series] = []
    original = plot_module.draw_curves

    def record(series, *args, **kwargs):  # type: ignore[no-untyped-def]
        drawn.extend(series)
        return original(series, *args, **kwargs)

    monkeypatch.setattr(plot_module, "draw_curves", record)
    plot_module.plot_memory_curve(reports, tmp_path / "curve.png")
    assert [(line.label, line.dashed) for line in drawn] == [
        ("smollm2 (options only)", True),
        ("smollm2", False),
    ]
    assert png_size((tmp_path / "curve.png").read_bytes())[0] > 0


def test_group_by_counts_only_the_samples_of_the_last_selection(tmp_path: Path) -> None:
    from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
    from longread.benchmarks.chapterbreak.io import write_instances
    from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
    from longread.evaluation import RunOptions, run_task
    from tests.fake_backends import ScriptedLM
    from tests.helpers import synthetic_book

    data = tmp_path / "cb.jsonl"
    instances = build_book(synthetic_book(12, book_id="b"), BuildOptions(prefix_tokens=300)).instances
    write_instances(instances, data)
    task = ChapterBreakTask(ChapterBreakSettings(prefix_lengths=(32,)))
    run = tmp_path / "run"
    run_task(task, data, ScriptedLM(), run, RunOptions(show_progress=False))
    run_task(task, data, ScriptedLM(), run, RunOptions(show_progress=False, limit=2, resume=True))
    files = build_report([run], tmp_path / "report", group_by=["book_id"])
    main, grouped = files.table.split("\n\n")
    assert "| 32 | 2 |" in main
    assert "(n=2)" in grouped.splitlines()[-1]


def test_a_run_with_several_metrics_gets_an_all_row_and_a_panel_per_metric(tmp_path: Path) -> None:
    """MuLD-shaped results: five metrics over length buckets → the `all` row from results' overall, and
    every_metric.png."""
    from longread.report.build import build_report

    run = tmp_path / "run"
    run.mkdir()
    metric = {"value": 20.0, "ci_low": 18.0, "ci_high": 22.0, "n": 3}
    names = ["rouge_l", "bleu1", "bleu4", "meteor", "token_f1"]
    results = {
        "layout_version": 2,
        "task": "muld/vlsp",
        "model": "m",
        "chance": None,
        "primary_metric": "rouge_l",
        "x_axis": {"field": "length_bucket", "label": "document length", "scale": "category"},
        "metrics": {name: {"level": "sample"} for name in names},
        "by_x": {
            "10–15K": {"x": "10–15K", "n": 3, "metrics": dict.fromkeys(names, metric), "extras": {}},
            "50–100K": {"x": "50–100K", "n": 3, "metrics": dict.fromkeys(names, metric), "extras": {}},
        },
        "overall": {"n": 6, "metrics": {name: {**metric, "value": 21.5, "n": 6} for name in names}},
    }
    (run / "results.json").write_text(json.dumps(results))
    (run / "config.json").write_text(json.dumps({"task": "muld/vlsp", "model": {"name": "m"}}))
    files = build_report([run], tmp_path / "rep")
    all_row = [line for line in files.table.splitlines() if "**all**" in line]
    assert len(all_row) == 1 and "| 6 |" in all_row[0] and all_row[0].count("21.5 [18.0–22.0]") == 5
    assert files.every_metric_plot is not None and files.every_metric_plot.stat().st_size > 20_000
