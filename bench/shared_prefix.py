"""Naive (one full forward per candidate) vs shared-prefix scoring on ChapterBreak-like instances, SmolLM2.

Instances are real ChapterBreak instances built by longread from the first
Gutenberg books of the shared corpus (one per book): a prefix ending at a chapter
break and 6 candidates (gold + 5 later chapters, headings carrying the gold's
number). The backend cuts the prefix from the left to 1K/2K/4K SmolLM2 tokens and
each candidate to its first 128.

Each variant runs in a fresh subprocess. Peak memory is the kernel's RSS
high-water mark (VmHWM in /proc/self/status) reset through /proc/self/clear_refs
after the model is loaded, so it covers the scoring only (weights resident
included). "forward" is ONE plain forward over the prefix with full logits —
what a harness does per candidate — for the memory ratio.

The speed-up is printed twice: by wall time and by the worker's CPU time (with
``--threads 1`` the CPU time hardly depends on what else the machine runs). The
"limit" beside it is the ratio of token positions the two read: naive reads
context + continuation[:-1] once per candidate, shared reads the context once
and each continuation once — the speed-up to expect if a token cost the same
everywhere (naive also computes vocabulary logits at every position, so it can
be beaten slightly). ``--prefill-chunks 512 2048`` runs shared scoring once per
chunk size against the same naive run, side by side.

    PYTHONPATH=src .venv/bin/python bench/shared_prefix.py [--instances 2] [--lengths 1024 2048 4096]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass
from typing import Literal

from variants import ROOT, bench_main, emit, peak_mb, reset_peak, run_worker

GUTENBERG = ROOT.parent / "shared" / "corpus" / "gutenberg"
CHAPTER_LINE = re.compile(r"^CHAPTER\b.*$", re.MULTILINE)
N_CANDIDATES = 6
CANDIDATE_TOKENS = 128
CANDIDATE_CHARS = 2500  # comfortably more than 128 tokens
CHARS_PER_TOKEN_BOUND = 6  # a prefix this many chars per token long surely holds the tokens asked for


@dataclass(frozen=True)
class Instance:
    book: str
    chapter: int
    context: str
    candidates: tuple[str, ...]  # the true one first


def build_instances(count: int, min_prefix_tokens: int) -> list[Instance]:
    """Real ChapterBreak instances from longread's builder: one per book (the middle one whose
    prefix holds enough tokens), books in a fixed order."""
    from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
    from longread.documents.reader import read_book

    instances = []
    for path in sorted(GUTENBERG.glob("pg*.txt.gz"), key=lambda p: int(p.name[2:].split(".")[0])):
        built = build_book(read_book(path), BuildOptions(prefix_tokens=8192, suffix_tokens=CANDIDATE_TOKENS))
        # GPT-2 counts; the 25% margin covers SmolLM2's slightly less dense tokenizer
        usable = [x for x in built.instances if x.prefix_tokens >= min_prefix_tokens * 1.25]
        if not usable:
            continue
        chosen = usable[len(usable) // 2]
        instances.append(Instance(path.name, chosen.chapter_index, chosen.prefix, tuple(chosen.candidates)))
        if len(instances) == count:
            break
    if len(instances) < count:
        raise SystemExit(f"only {len(instances)} books in {GUTENBERG} give instances this long")
    return instances


@dataclass(frozen=True)
class VariantRun:
    """What one variant measured in its own process."""

    variant: str
    length: int
    seconds: list[float]
    cpu_seconds: list[float]
    logprobs: list[list[float]]
    context_tokens: list[int]
    positions: list[int]
    """Token positions the model read per instance (the token-count cost)."""
    peak_rss_mb: float
    rss_before_mb: float
    threads: int
    books: list[str]

    @property
    def seconds_per_instance(self) -> float:
        return sum(self.seconds) / len(self.seconds)

    @property
    def cpu_per_instance(self) -> float:
        return sum(self.cpu_seconds) / len(self.cpu_seconds)

    @property
    def work_mb(self) -> float:
        return self.peak_rss_mb - self.rss_before_mb


def worker(variant: str, length: int, count: int, threads: int | None, prefill_chunk: int) -> VariantRun:
    import gc

    import torch

    from longread.models import LoglikelihoodRequest, load_backend
    from longread.models.hf.backend import HFBackend
    from longread.models.tokens import encode_request

    instances = build_instances(count, length)
    mode: Literal["shared", "naive"] = "naive" if variant == "naive" else "shared"
    backend = load_backend("smollm2", mode=mode, threads=threads, prefill_chunk=prefill_chunk)
    assert isinstance(backend, HFBackend)
    requests = [
        LoglikelihoodRequest(
            inst.context, inst.candidates, max_context_tokens=length, max_continuation_tokens=CANDIDATE_TOKENS
        )
        for inst in instances
    ]
    with torch.inference_mode():  # warm-up, so first-call costs hit no variant
        backend.model(torch.tensor([[1, 2, 3]]))
    gc.collect()
    rss_before_mb = reset_peak()
    seconds: list[float] = []
    cpu_seconds: list[float] = []
    logprobs: list[list[float]] = []
    kept: list[int] = []
    positions: list[int] = []
    for request in requests:
        group = encode_request(backend.encoder, request, backend.max_length)
        reads = [len(group.context) + len(c) - 1 for c in group.continuations]
        if variant == "naive":
            positions.append(sum(reads))
        elif variant == "shared":
            positions.append(len(group.context) - 1 + sum(len(c) for c in group.continuations))
        else:
            positions.append(len(group.context))
        start = time.perf_counter()
        cpu_start = time.process_time()
        if variant == "forward":
            with torch.inference_mode():
                backend.model(
                    torch.tensor([group.context])
                )  # full logits at every position, as a harness does
            kept.append(group.context_tokens_kept)
        else:
            result = backend.loglikelihood([request])[0]
            logprobs.append([s.logprob for s in result.scores])
            kept.append(result.context_tokens_kept)
        seconds.append(time.perf_counter() - start)
        cpu_seconds.append(time.process_time() - cpu_start)
    return VariantRun(
        variant=variant,
        length=length,
        seconds=seconds,
        cpu_seconds=cpu_seconds,
        logprobs=logprobs,
        context_tokens=kept,
        positions=positions,
        peak_rss_mb=peak_mb(),
        rss_before_mb=rss_before_mb,
        threads=torch.get_num_threads(),
        books=[f"{inst.book}#ch{inst.chapter}" for inst in instances],
    )


def run_variant(variant: str, length: int, count: int, threads: int | None, prefill_chunk: int) -> VariantRun:
    arguments = ["--lengths", str(length), "--instances", str(count), "--prefill-chunk", str(prefill_chunk)]
    if threads is not None:
        arguments += ["--threads", str(threads)]
    return run_worker(__file__, variant, arguments, VariantRun, f"{variant} at {length}")


def _default_prefill_chunk() -> int:
    from longread.models.registry import BackendOptions

    return BackendOptions().prefill_chunk


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default_chunk = _default_prefill_chunk()
    parser.add_argument("--instances", type=int, default=2, help="instances per prefix length (default 2)")
    parser.add_argument("--lengths", type=int, nargs="+", default=[1024, 2048, 4096])
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: idle CPUs)")
    parser.add_argument(
        "--prefill-chunks",
        "--prefill-chunk",
        type=int,
        nargs="+",
        default=[default_chunk],
        help=f"shared mode's prefill chunk(s), each run against the same naive run (default {default_chunk})",
    )
    parser.add_argument("--worker", choices=["naive", "shared", "forward"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        emit(worker(args.worker, args.lengths[0], args.instances, args.threads, args.prefill_chunks[0]))
        return

    print(
        f"SmolLM2-135M fp32 CPU, {N_CANDIDATES} candidates x {CANDIDATE_TOKENS} tokens, "
        f"{args.instances} instance(s) per length, prefill chunk(s) {args.prefill_chunks}\n"
        "speed-up = naive / shared time (wall, and CPU time of the worker); limit = naive / shared token "
        "positions read\n"
        "peak = RSS high-water mark (VmHWM) of a fresh process, reset after loading; "
        "+work = above the RSS before scoring; fwd = ONE plain forward over the prefix"
    )
    print(
        f"{'prefix':>6} {'chunk':>5} {'ctx tok':>9} {'naive s':>8} {'shared s':>9} {'speed-up':>8} "
        f"{'cpu x':>6} {'limit':>6} "
        f"{'peak MB fwd':>11} {'naive':>7} {'shared':>7} {'shr/fwd':>7} {'+work shr':>9} {'+work fwd':>9} "
        f"{'max|Δ|':>9} {'gold top':>8}",
        flush=True,
    )
    for length in args.lengths:
        forward = run_variant("forward", length, args.instances, args.threads, args.prefill_chunks[0])
        naive = run_variant("naive", length, args.instances, args.threads, args.prefill_chunks[0])
        for chunk in args.prefill_chunks:
            shared = run_variant("shared", length, args.instances, args.threads, chunk)
            delta = max(
                abs(a - b)
                for xs, ys in zip(naive.logprobs, shared.logprobs, strict=True)
                for a, b in zip(xs, ys, strict=True)
            )
            correct = sum(lp.index(max(lp)) == 0 for lp in shared.logprobs)
            tokens = f"{min(shared.context_tokens)}-{max(shared.context_tokens)}"
            limit = sum(naive.positions) / sum(shared.positions)
            print(
                f"{length:>6} {chunk:>5} {tokens:>9} {naive.seconds_per_instance:>8.1f} "
                f"{shared.seconds_per_instance:>9.1f} "
                f"{naive.seconds_per_instance / shared.seconds_per_instance:>7.2f}x "
                f"{naive.cpu_per_instance / shared.cpu_per_instance:>5.2f}x {limit:>5.2f}x "
                f"{forward.peak_rss_mb:>11.0f} {naive.peak_rss_mb:>7.0f} {shared.peak_rss_mb:>7.0f} "
                f"{shared.peak_rss_mb / forward.peak_rss_mb:>7.2f} "
                f"{shared.work_mb:>9.0f} {forward.work_mb:>9.0f} "
                f"{delta:>9.2e} {f'{correct}/{args.instances}':>8}",
                flush=True,
            )
        print(f"  books {naive.books}, {naive.threads} torch thread(s)", file=sys.stderr)


if __name__ == "__main__":
    bench_main(main)
