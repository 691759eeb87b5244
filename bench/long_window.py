"""The whole window: Gemma 3 270M scoring one ChapterBreak instance at 1K … 32K prefix tokens, beside the
cost of ONE chunked read of the same tokens.

The instance is the first long one ``make demo-long`` builds (Pride and Prejudice,
bundled): a prefix with at least 32K tokens before a chapter break and 6 candidates
cut to 128 tokens. For each prefix length two variants run, each in a fresh process:

- ``score``: the backend's log-likelihood request, as ChapterBreak asks it (shared-prefix
  scoring: the prefix read once without vocabulary logits, the 6 candidates packed on top);
- ``read``: one chunked forward (the same prefill chunk, no vocabulary logits) over the
  same tokens the model holds: ``<bos>`` + the kept prefix + every candidate, once.

``ratio`` = score / read, by wall time and by the worker's CPU time (CPU time hardly
depends on what else a shared machine runs; run with ``--threads 1`` there). The target
is ≤ 1.2×: scoring should cost little more than reading what it scores. Peak memory is
the kernel's RSS high-water mark (VmHWM), reset after the model is loaded and warmed up;
``+work`` is the part above the RSS before the variant ran (the weights are resident).
A length that does not fit the model's window beside a candidate is lowered, as the demo
does (32,768 → 32,640 for Gemma 3 270M).

    PYTHONPATH=src .venv/bin/python bench/long_window.py [--lengths 1024 2048 …] [--threads 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

from variants import bench_main, emit, peak_mb, reset_peak, run_worker

TARGET_RATIO = 1.2
DEFAULT_LENGTHS = [1024, 2048, 4096, 8192, 16384, 32768]


@dataclass(frozen=True)
class VariantRun:
    variant: str
    length: int
    context_tokens: int
    tokens_read: int
    """Token positions the model processed (context + candidates, once)."""
    seconds: float
    cpu_seconds: float
    peak_rss_mb: float
    rss_before_mb: float
    threads: int
    instance: str
    gold_rank: int | None

    @property
    def work_mb(self) -> float:
        return self.peak_rss_mb - self.rss_before_mb


def worker(variant: str, length: int, threads: int | None, model: str) -> VariantRun:
    import gc

    import torch

    from longread.benchmarks.chapterbreak.build import build_book
    from longread.demos.long_window import SUFFIX_TOKENS, long_book, long_build_options
    from longread.documents.reader import read_book
    from longread.models import LoglikelihoodRequest, load_backend
    from longread.models.hf.backend import HFBackend
    from longread.models.hf.shared_prefix import prefill
    from longread.models.tokens import encode_request

    instance = build_book(read_book(long_book()), long_build_options(max(DEFAULT_LENGTHS))).instances[0]
    backend = load_backend(model, threads=threads)
    assert isinstance(backend, HFBackend)
    request = LoglikelihoodRequest(
        instance.prefix,
        tuple(instance.candidates),
        max_context_tokens=length,
        max_continuation_tokens=SUFFIX_TOKENS,
    )
    group = encode_request(backend.encoder, request, backend.max_length)
    ids = [*group.context, *(token for continuation in group.continuations for token in continuation)]
    with torch.inference_mode():  # warm-up, so first-call costs hit no variant
        backend.model(torch.tensor([[2, 3, 4]]))
    gc.collect()
    rss_before_mb = reset_peak()
    gold_rank = None
    start, cpu_start = time.perf_counter(), time.process_time()
    if variant == "score":
        result = backend.loglikelihood([request])[0]
        logprobs = [score.logprob for score in result.scores]
        gold_rank = sorted(logprobs, reverse=True).index(logprobs[0]) + 1
        tokens_read = len(group.context) - 1 + sum(len(c) for c in group.continuations)
    else:
        prefill(backend.model, ids, backend.prefill_chunk)
        tokens_read = len(ids)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    return VariantRun(
        variant=variant,
        length=length,
        context_tokens=group.context_tokens_kept,
        tokens_read=tokens_read,
        seconds=seconds,
        cpu_seconds=cpu_seconds,
        peak_rss_mb=peak_mb(),
        rss_before_mb=rss_before_mb,
        threads=torch.get_num_threads(),
        instance=instance.id,
        gold_rank=gold_rank,
    )


def run_variant(variant: str, length: int, threads: int | None, model: str) -> VariantRun:
    arguments = ["--lengths", str(length), "--model", model]
    if threads is not None:
        arguments += ["--threads", str(threads)]
    return run_worker(__file__, variant, arguments, VariantRun, f"{variant} at {length}")


def _fitted(lengths: list[int], model: str) -> list[int]:
    from longread.demos.long_window import fit_lengths
    from longread.models import load_backend
    from longread.models.hf.backend import HFBackend

    backend = load_backend(model, threads=1)
    assert isinstance(backend, HFBackend)
    start = int(backend.encoder.start_token_id is not None)
    fitted = fit_lengths(lengths, backend.max_length, start_tokens=start)
    for note in fitted.notes:
        print("note: " + note)
    return list(fitted.lengths)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lengths", type=int, nargs="+", default=DEFAULT_LENGTHS)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: every CPU)")
    parser.add_argument("--model", default="gemma3")
    parser.add_argument("--worker", choices=["score", "read"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        emit(worker(args.worker, args.lengths[0], args.threads, args.model))
        return
    lengths = _fitted(args.lengths, args.model)
    print(
        f"{args.model} fp32 CPU, one ChapterBreak instance (6 candidates x 128 tokens); "
        "score = the log-likelihood request; read = ONE chunked read of <bos> + prefix + candidates\n"
        f"ratio = score / read (target <= {TARGET_RATIO}x); peak = VmHWM of a fresh process after loading; "
        "ms/tok = CPU ms per token read"
    )
    print(
        f"{'prefix':>6} {'ctx':>6} {'score s':>8} {'cpu':>7} {'read s':>7} {'cpu':>7} {'ratio':>6} "
        f"{'cpu x':>6} {'ms/tok':>7} {'peak MB sc':>10} {'read':>6} {'+work sc':>8} {'read':>6} {'gold':>4}",
        flush=True,
    )
    for length in lengths:
        read = run_variant("read", length, args.threads, args.model)
        score = run_variant("score", length, args.threads, args.model)
        cpu_ratio = score.cpu_seconds / read.cpu_seconds
        flag = "" if cpu_ratio <= TARGET_RATIO else f"  over {TARGET_RATIO}x"
        print(
            f"{length:>6} {score.context_tokens:>6} {score.seconds:>8.1f} {score.cpu_seconds:>7.1f} "
            f"{read.seconds:>7.1f} {read.cpu_seconds:>7.1f} {score.seconds / read.seconds:>5.2f}x "
            f"{cpu_ratio:>5.2f}x {1000 * score.cpu_seconds / score.tokens_read:>7.2f} "
            f"{score.peak_rss_mb:>10.0f} {read.peak_rss_mb:>6.0f} {score.work_mb:>8.0f} {read.work_mb:>6.0f} "
            f"{score.gold_rank:>4}{flag}",
            flush=True,
        )
    print(f"  instance {score.instance}, {score.threads} torch thread(s)", file=sys.stderr)


if __name__ == "__main__":
    bench_main(main)
