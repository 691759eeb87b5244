"""`longread export chapterbreak --to lm-eval` run by lm-evaluation-harness beside longread's own run.

Builds ChapterBreak from a real book of the shared corpus, exports it for lm-eval in
SmolLM2's tokenizer, then scores the same items twice with the same SmolLM2 weights
(loaded once): longread's runner (shared prefix: each context read once) and lm-eval's
``simple_evaluate`` (one forward per context + choice). Prints max |Δ log-prob|, whether
every sample's accuracy agrees, and both wall times.

    PYTHONPATH=src .venv/bin/python bench/export_vs_lm_eval.py [--instances 6] [--lengths 256,1024]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT.parent / "shared" / "corpus" / "gutenberg" / "pg1342.txt.gz"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--instances", type=int, default=6)
    parser.add_argument("--lengths", default="256,1024")
    parser.add_argument("--suffix-tokens", type=int, default=128)
    parser.add_argument("--book", type=Path, default=BOOK)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    lengths = tuple(int(part) for part in args.lengths.split(","))

    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from longread.benchmarks.chapterbreak.build import BuildOptions
    from longread.benchmarks.chapterbreak.io import load_instances, write_instances
    from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak
    from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
    from longread.evaluation import RunOptions, run_task
    from longread.export import ExportOptions, export_task
    from longread.models import load_backend
    from longread.models.threads import set_threads

    threads = set_threads(args.threads)
    work = Path(tempfile.mkdtemp(prefix="export-vs-lm-eval-"))
    build_chapterbreak(
        [args.book], work / "all.jsonl", BuildOptions(prefix_tokens=max(lengths)), show_progress=False
    )
    data = work / "data.jsonl"
    write_instances(load_instances(work / "all.jsonl")[: args.instances], data)
    options = ExportOptions("smollm2", lengths, args.suffix_tokens)
    report = export_task("chapterbreak", data, "lm-eval", work / "lm-eval", options)
    print("\n".join(report.summary_lines()))

    model = load_backend("smollm2", threads=threads)
    settings = ChapterBreakSettings(prefix_lengths=lengths, suffix_tokens=args.suffix_tokens)
    started = time.perf_counter()
    run_task(ChapterBreakTask(settings), data, model, work / "run", RunOptions(show_progress=False))
    ours_seconds = time.perf_counter() - started
    rows = [json.loads(line) for line in (work / "run" / "samples.jsonl").read_text().splitlines()]
    ours = {(row["id"], row["prefix_length"]): row for row in rows}

    lm = HFLM(pretrained=model.model, tokenizer=model.tokenizer, batch_size=1, device="cpu")  # type: ignore[attr-defined]
    names = [f"longread_chapterbreak_{length}" for length in lengths]
    started = time.perf_counter()
    output = simple_evaluate(
        model=lm,
        tasks=names,
        task_manager=TaskManager(include_path=str(work / "lm-eval"), include_defaults=False),
        log_samples=True,
    )
    theirs_seconds = time.perf_counter() - started
    assert output is not None
    worst, compared, same_acc, samples = 0.0, 0, 0, 0
    for length in lengths:
        for sample in output["samples"][f"longread_chapterbreak_{length}"]:
            doc, row = sample["doc"], ours[(sample["doc"]["id"], length)]
            values = [float(resp[0]) for resp in sample["filtered_resps"]]
            gold_first = [values[doc["label"]], *values[: doc["label"]]]
            for mine, their in zip(row["logprobs"], gold_first, strict=True):
                worst, compared = max(worst, abs(mine - their)), compared + 1
            same_acc += bool(sample["acc"]) == row["correct"]
            samples += 1
    print(f"SmolLM2-135M fp32, {threads} torch thread(s), {args.instances} instances × lengths {lengths}")
    print(f"max |Δ log-prob| {worst:.2e} nats over {compared} candidates")
    print(f"accuracy equal on {same_acc}/{samples} samples")
    print(
        f"wall time: lm-eval {theirs_seconds:.1f} s, longread {ours_seconds:.1f} s "
        f"(lm-eval / longread = {theirs_seconds / ours_seconds:.2f})"
    )


if __name__ == "__main__":
    main()
