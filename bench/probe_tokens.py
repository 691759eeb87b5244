"""The cost of ``longread probe tokens`` against ONE chunked read of the same book tokens, in one process.

Three variants run on the first ``--tokens`` tokens of a bundled book (Frankenstein), alternating, each
``--repeats`` times (the median is reported):

- ``read``: one chunked forward over the tokens with the KV cache and no vocabulary logits (the base
  model), ``--chunk`` tokens at a time — what reading the book once costs;
- ``long``: the probe's long pass (:func:`longread.models.hf.token_logprobs.long_logprobs`) with a window
  that holds the whole text: the same chunked read, plus each token's log-prob (the vocabulary logits of
  every position, then only the chosen token's log-softmax kept);
- ``short``: the probe's short pass with ``--short`` K and ``--stride`` S: windows of K tokens advancing by S.

``long / read`` is the probe's overhead over reading (goal ≤ 1.2×); ``short / read`` and the short pass's
tokens per book token ((K + a start token) / S) say what the short view costs. Times are CPU seconds of
this process (``time.process_time``: hardly moved by other jobs on a shared machine), wall seconds beside.
A book longer than the window is read by the long pass in a sliding window (each half-window read twice):
``--window`` below ``--tokens`` measures that case.

    PYTHONPATH=src .venv/bin/python bench/probe_tokens.py [--model smollm2] [--tokens 4096] [--window 8192]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from transformers import DynamicCache

from longread.documents.reader import read_book
from longread.models.hf.token_logprobs import long_logprobs, short_logprobs
from longread.models.registry import load_backend

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "src" / "longread" / "data" / "books" / "pg84.txt.gz"
TARGET = 1.2


@torch.inference_mode()
def one_read(model: Any, ids: list[int], chunk: int, head: list[int]) -> None:
    cache = DynamicCache(config=model.config)
    tokens = head + ids
    for start in range(0, len(tokens), chunk):
        piece = torch.tensor([tokens[start : start + chunk]])
        model.base_model(input_ids=piece, past_key_values=cache, use_cache=True)


def timed(work: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--window", type=int, default=8192)
    parser.add_argument("--chunk", type=int, default=512)
    parser.add_argument("--short", type=int, default=256)
    parser.add_argument("--stride", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    backend: Any = load_backend(args.model)
    model, encoder = backend.model, backend.encoder
    text, _ = read_book(BOOK).render()
    ids = encoder.encode_plain(text)[: args.tokens]
    start = encoder.start_token_id
    head = [] if start is None else [start]
    window = min(args.window, backend.max_length - len(head))
    variants: dict[str, Callable[[], object]] = {
        "read": lambda: one_read(model, ids, args.chunk, head),
        "long": lambda: long_logprobs(model, ids, window=window, chunk=args.chunk, start_token=start),
        "short": lambda: short_logprobs(model, ids, short=args.short, stride=args.stride, start_token=start),
    }
    variants["read"]()  # warm-up: first-call allocations are not the variants' cost
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for _ in range(args.repeats):
        for name, work in variants.items():
            times[name].append(timed(work))
    cpu = {name: statistics.median(t[0] for t in runs) for name, runs in times.items()}
    wall = {name: statistics.median(t[1] for t in runs) for name, runs in times.items()}
    print(f"{args.model}: {len(ids)} tokens of {BOOK.name}, window {window}, chunk {args.chunk}, "
          f"short K={args.short} S={args.stride}, {torch.get_num_threads()} threads, "
          f"median of {args.repeats}")  # fmt: skip
    print("| variant | CPU s | wall s | CPU ratio to read |")
    print("| --- | ---: | ---: | ---: |")
    for name in variants:
        print(f"| {name} | {cpu[name]:.2f} | {wall[name]:.2f} | {cpu[name] / cpu['read']:.2f}× |")
    per_token = (args.short + len(head)) / args.stride
    long_ratio = cpu["long"] / cpu["read"]
    verdict = "met" if long_ratio <= TARGET else "NOT met"
    print(f"long pass / one read: {long_ratio:.2f}× (goal ≤ {TARGET}×: {verdict})")
    short_ratio = cpu["short"] / cpu["read"]
    print(f"short pass: {per_token:.2f} tokens read per book token; {short_ratio:.2f}× one read")


if __name__ == "__main__":
    main()
