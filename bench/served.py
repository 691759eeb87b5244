"""SmolLM2 served by vLLM (CPU) vs the local HF backend on the same real ChapterBreak instances, side by side.

Instances: real ChapterBreak instances built by longread from the first Gutenberg books of the
shared corpus (bench/shared_prefix.py's builder: one per book, 6 candidates = gold + 5 later
chapters), the prefix cut from the left to each ``--lengths`` value, each candidate to its first
``--candidate-tokens`` SmolLM2 tokens. What is measured, in one process:

1. the local HF backend (``smollm2``, shared-prefix mode) scoring every instance;
2. vLLM 0.32 CPU (float32, --enforce-eager, 127.0.0.1, usage stats off) started with
   ``--enable-prefix-caching``, the served backend (``openai:…#smollm2``, one HTTP request per
   instance carrying its 6 candidate prompts as token ids) at each ``--concurrency``: instances/s,
   candidate tokens/s, prompt tokens/s (tokens the server reads: 6 x (context + candidate)), wall and
   CPU of this client, CPU of the server's process group, vLLM's prefix-cache counters (/metrics),
   and whether the predictions equal the local ones (max |Δ log-prob| per candidate);
3. greedy generation (``--gen-prompts`` prompts, ``--gen-tokens`` tokens) at concurrency 1 and 4,
   and the local backend one prompt at a time, texts compared;
4. a prefix-cache control: plain completions (no log-probs, max_tokens 1) of the first instance's
   6 prompts, sent twice — whether the cache works at all for ordinary requests;
5. vLLM restarted with ``--no-enable-prefix-caching``: the concurrency-1 scoring pass and the
   control again — the time ratio says whether the cache helps prompt-log-prob requests.

The machine has 2 cores shared with other jobs: the load average is printed at start and end, and
absolute numbers are noisy (the server CPU seconds are the steadier measure).

Time on 2 busy cores: ``--quick`` ~8 min, ``--instances 2`` ~12 min, the default (12 per length) ~1 h
— each vLLM pass re-reads every context once per candidate (see the README's numbers).

    PYTHONPATH=src .venv/bin/python bench/served.py [--quick] [--instances 12] [--lengths 512 2048]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import FrameType
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import torch  # noqa: E402

from longread.models import LoglikelihoodRequest, LoglikelihoodResult, load_backend  # noqa: E402
from longread.models.hf.backend import HFBackend  # noqa: E402
from longread.models.requests import GenerateRequest, GenerateResult  # noqa: E402
from longread.models.served import ServedBackend  # noqa: E402
from longread.models.served.vllm_process import (  # noqa: E402
    VLLMNotInstalledError,
    VLLMStartError,
    smollm2_folder,
    vllm_python,
)
from longread.models.served.vllm_process import VLLMProcess as VLLMServer  # noqa: E402
from longread.models.tokens import encode_request  # noqa: E402
from shared_prefix import build_instances  # noqa: E402

T = TypeVar("T")
GEN_CHARS = 1500
TIMEOUT_S = 3600  # per request: a 2K instance at concurrency 8 on 2 busy cores waits a long time


@dataclass(frozen=True)
class Pass:
    """One timed run of a workload."""

    label: str
    concurrency: str
    wall: float
    client_cpu: float
    server_cpu: float | None
    cache: tuple[float, float] | None  # (queried tokens, hit tokens) during the pass


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def timed(label: str, concurrency: str, server: VLLMServer | None, run: Callable[[], T]) -> tuple[Pass, T]:
    cpu0, cache0 = (server.cpu_seconds(), server.prefix_cache()) if server else (0.0, None)
    start, client0 = time.perf_counter(), time.process_time()
    out = run()
    wall, client = time.perf_counter() - start, time.process_time() - client0
    server_cpu = server.cpu_seconds() - cpu0 if server else None
    cache1 = server.prefix_cache() if server else None
    cache = (cache1[0] - cache0[0], cache1[1] - cache0[1]) if cache0 and cache1 else None
    print(f"  {label} c={concurrency}: {wall:.1f} s (load {load()})", file=sys.stderr, flush=True)
    return Pass(label, concurrency, wall, client, server_cpu, cache), out


def served_backend(server: VLLMServer, concurrency: int) -> ServedBackend:
    backend = load_backend(server.spec(f"concurrency={concurrency}&timeout={TIMEOUT_S}&max_retries=1"))
    assert isinstance(backend, ServedBackend)
    return backend


def compare(local: Sequence[LoglikelihoodResult], served: Sequence[LoglikelihoodResult]) -> tuple[int, float]:
    """(instances whose predicted candidate is the same, max |Δ log-prob| over every candidate)."""
    same, delta = 0, 0.0
    for a, b in zip(local, served, strict=True):
        xs, ys = [s.logprob for s in a.scores], [s.logprob for s in b.scores]
        same += xs.index(max(xs)) == ys.index(max(ys))
        delta = max(delta, *(abs(x - y) for x, y in zip(xs, ys, strict=True)))
    return same, delta


def control(server: VLLMServer, scored: list[list[int]]) -> list[Pass]:
    """Ordinary completions (no log-probs, max_tokens 1): prompts never sent before (the scored ones with
    their second token dropped, so no cached block matches) sent twice, then the very prompts the
    log-prob passes scored — does the cache answer ordinary requests, and did log-prob requests fill it?"""
    fresh = [p[:1] + p[2:] for p in scored]

    def send(prompts: list[list[int]]) -> None:
        body = json.dumps({"model": "smollm2", "prompt": prompts, "max_tokens": 1, "temperature": 0}).encode()
        request = urllib.request.Request(
            f"{server.root_url}/v1/completions", body, {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            response.read()

    sends = [
        ("new prompts, 1st send", fresh),
        ("new prompts, 2nd send", fresh),
        ("prompts scored above", scored),
    ]
    return [timed(f"plain completions, {label}", "1", server, partial(send, p))[0] for label, p in sends]


def generation(
    server: VLLMServer, requests: list[GenerateRequest], levels: Sequence[int]
) -> list[tuple[Pass, list[GenerateResult]]]:
    runs = []
    for c in levels:
        backend = served_backend(server, c)
        runs.append(timed("vLLM generate", str(c), server, partial(backend.generate, requests)))
        backend.close()
    return runs


def fmt_cache(cache: tuple[float, float] | None) -> str:
    if cache is None:
        return "n/a"
    queries, hits = cache
    return f"{hits:.0f}/{queries:.0f}"


def row(p: Pass, n_requests: int, cand_tokens: int, prompt_tokens: int, check: str) -> str:
    server_cpu = f"{p.server_cpu:.1f}" if p.server_cpu is not None else "-"
    return (
        f"{p.label:<22} {p.concurrency:>4} {p.wall:>7.1f} {n_requests / p.wall:>6.3f} "
        f"{cand_tokens / p.wall:>8.1f} {prompt_tokens / p.wall:>8.1f} {p.client_cpu:>7.1f} "
        f"{server_cpu:>7} "
        f"{fmt_cache(p.cache):>13} {check}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="3 instances, prefix 512, candidates of 32 tokens"
    )
    parser.add_argument("--instances", type=int, default=12, help="instances per prefix length (default 12)")
    parser.add_argument("--lengths", type=int, nargs="+", default=[512, 2048])
    parser.add_argument("--candidate-tokens", type=int, default=128)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--gen-prompts", type=int, default=8, help="0: no generation measurement")
    parser.add_argument("--gen-tokens", type=int, default=32)
    parser.add_argument("--port", type=int, default=8831, help="127.0.0.1 port of the vLLM server")
    args = parser.parse_args()
    if args.quick:
        args.instances, args.lengths, args.candidate_tokens = 3, [512], 32

    def stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(f"stopped by signal {signum}")  # the finally blocks kill the servers

    signal.signal(signal.SIGTERM, stop)
    start_load = load()
    instances = [(length, x) for length in args.lengths for x in build_instances(args.instances, length)]
    requests = [
        LoglikelihoodRequest(
            x.context, x.candidates, max_context_tokens=length, max_continuation_tokens=args.candidate_tokens
        )
        for length, x in instances
    ]
    gen_requests = [  # ~1500-character pieces of the contexts (~350 tokens), different ones
        GenerateRequest(text[-GEN_CHARS:], max_tokens=args.gen_tokens)
        for i in range(args.gen_prompts)
        for text in [instances[i % len(instances)][1].context[: -GEN_CHARS * (i // len(instances)) or None]]
    ]
    try:
        python, folder = vllm_python(ROOT), smollm2_folder()
    except VLLMNotInstalledError as exc:
        raise SystemExit(str(exc)) from None
    log = Path(tempfile.mkdtemp(prefix="longread-bench-served-")) / "vllm.log"

    local = load_backend("smollm2")
    assert isinstance(local, HFBackend)
    local.loglikelihood(requests[:1])  # warm-up
    hf_pass, hf_results = timed("local HF (shared)", "-", None, partial(local.loglikelihood, requests))
    cand_tokens = sum(s.n_tokens for r in hf_results for s in r.scores)
    prompt_tokens = sum(r.context_tokens_kept + s.n_tokens for r in hf_results for s in r.scores)
    hf_gen: tuple[Pass, list[GenerateResult]] | None = None
    if gen_requests:
        hf_gen = timed("local HF generate", "1", None, partial(local.generate, gen_requests))
    hf_threads = torch.get_num_threads()
    del local  # its memory back before vLLM starts

    rows: list[tuple[Pass, str]] = [(hf_pass, "reference")]
    gen_runs: list[tuple[Pass, list[GenerateResult]]] = []
    controls: list[Pass] = []
    startups: list[float] = []
    scored: dict[str, Pass] = {}
    first_prompts: list[list[int]] = []
    for cache_flag in ("--enable-prefix-caching", "--no-enable-prefix-caching"):
        server = VLLMServer(args.port, log, model_folder=folder, extra_args=(cache_flag,), python=python)
        cache_label = "on" if cache_flag.startswith("--enable") else "off"
        try:
            try:
                startups.append(server.start())
            except VLLMStartError as exc:
                raise SystemExit(str(exc)) from None
            levels = args.concurrency if cache_label == "on" else [1]
            for c in levels:
                backend = served_backend(server, c)
                if c == levels[0]:
                    backend.loglikelihood(requests[:1])  # warm-up (after the self-check's requests)
                    group = encode_request(backend.tokenizer, requests[0], backend._scoring_window())
                    first_prompts = [list(group.context) + list(t) for t in group.continuations]
                p, results = timed(
                    f"vLLM cache {cache_label}", str(c), server, partial(backend.loglikelihood, requests)
                )
                same, delta = compare(hf_results, results)
                rows.append((p, f"{same}/{len(requests)} same, max|Δ| {delta:.1e}"))
                scored[f"{cache_label}{c}"] = p
                backend.close()
            controls += [
                Pass(
                    f"{x.label} (cache {cache_label})",
                    x.concurrency,
                    x.wall,
                    x.client_cpu,
                    x.server_cpu,
                    x.cache,
                )
                for x in control(server, first_prompts)
            ]
            if cache_label == "on" and gen_requests:
                gen_runs = generation(server, gen_requests, [1, 4])
        finally:
            server.kill()

    print(
        f"\nSmolLM2-135M fp32 CPU; {len(requests)} ChapterBreak instances (prefix {args.lengths} tokens, "
        f"{args.instances} per length, 6 candidates x {args.candidate_tokens} tokens); vLLM 0.32 CPU "
        "--dtype float32 --enforce-eager, KV cache 1 GiB; "
        f"startup {', '.join(f'{s:.0f}' for s in startups)} s"
    )
    print(f"local HF backend: shared-prefix mode, {hf_threads} torch thread(s)")
    print(f"load average (1/5/15 min) at start {start_load}, at end {load()} — 2 shared cores: noisy numbers")
    print(
        f"{cand_tokens} candidate tokens, ~{prompt_tokens} prompt tokens read by the server (6 x (context + "
        "candidate)); tok/s are per wall second; cache = prefix-cache hit/queried tokens from /metrics"
    )
    print(
        f"{'variant':<22} {'conc':>4} {'wall s':>7} {'inst/s':>6} {'cand t/s':>8} {'prompt t/s':>8} "
        f"{'cli CPU':>7} {'srv CPU':>7} {'cache hit/q':>13} predictions vs local"
    )
    for p, check in rows:
        print(row(p, len(requests), cand_tokens, prompt_tokens, check))
    base = scored["on1"]
    for c in args.concurrency[1:]:
        p = scored[f"on{c}"]
        print(
            f"concurrency {c} vs 1: wall x{base.wall / p.wall:.2f}, "
            f"server CPU x{(base.server_cpu or 0) / (p.server_cpu or 1):.2f}"
        )
    print(f"vLLM c=1 vs local HF: wall x{hf_pass.wall / base.wall:.2f} (>1: vLLM faster)")
    off = scored["off1"]
    print(
        f"prefix cache on vs off (prompt log-probs, c=1): wall x{off.wall / base.wall:.2f}, server CPU "
        f"x{(off.server_cpu or 0) / (base.server_cpu or 1):.2f} (>1: cache helps); hit/queried tokens "
        f"{fmt_cache(base.cache)} with cache on"
    )
    for p in controls:
        print(
            f"control {p.label}: {p.wall:.1f} s, server CPU {p.server_cpu or 0:.1f} s, "
            f"cache {fmt_cache(p.cache)}"
        )
    if hf_gen and gen_runs:
        gen_tokens = sum(r.n_generated_tokens for r in hf_gen[1])
        print(f"generation: {len(gen_requests)} prompts, greedy, max {args.gen_tokens} tokens")
        for p, outputs in [hf_gen, *gen_runs]:
            equal = [a.text == b.text for a, b in zip(hf_gen[1], outputs, strict=True)]
            print(
                f"  {p.label:<18} c={p.concurrency}: {p.wall:6.1f} s, "
                f"{sum(r.n_generated_tokens for r in outputs) / p.wall:6.1f} generated tok/s, "
                f"texts equal to local {sum(equal)}/{len(equal)}"
            )
        print(
            f"  vLLM concurrency 4 vs 1: x{gen_runs[0][0].wall / gen_runs[1][0].wall:.2f}; "
            f"local generated {gen_tokens} tokens"
        )
    print(f"vLLM log: {log}", file=sys.stderr)


if __name__ == "__main__":
    main()
