"""One-at-a-time vs batched generation on the same real prompts, side by side in one process.

Prompts: the authors' NarrativeXL summary prompt (SmolLM2's chat template) on
scenes cut from Pride and Prejudice. Prints tokens/s of each path, the
speed-up, whether the texts are equal, and how many batched rows were redone
one at a time because of a near tie.

    .venv/bin/python bench/generate_batch.py --prompts 8 --max-tokens 48 --batch 8 --threads 1
"""

from __future__ import annotations

import argparse
import gzip
import time
from pathlib import Path

from longread.models.hf.backend import HFBackend
from longread.models.registry import load_backend
from longread.models.requests import ChatPrompt, GenerateRequest

BOOK = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "gutenberg" / "pg1342.txt.gz"
ANCHOR = "It is a truth universally acknowledged"


def scenes(sizes: list[int]) -> list[str]:
    """Consecutive pieces of about ``sizes`` characters, cut at paragraph ends from chapter 1 on."""
    with gzip.open(BOOK, "rb") as fh:
        text = fh.read().decode("utf-8-sig").replace("\r\n", "\n")
    pos = text.index(ANCHOR)
    out = []
    for size in sizes:
        end = text.find("\n\n", pos + size)
        out.append(text[pos:end].strip())
        pos = end + 2
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--chars", type=int, default=1200, help="scene size in characters (varied ±50%%)")
    args = parser.parse_args()
    backend = load_backend("smollm2", threads=args.threads)
    assert isinstance(backend, HFBackend)
    sizes = [int(args.chars * (0.5 + (i % 5) / 4)) for i in range(args.prompts)]
    requests = [
        GenerateRequest(
            ChatPrompt((("user", f'Summarize the following book excerpt: "{scene}".'),)),
            max_tokens=args.max_tokens,
        )
        for scene in scenes(sizes)
    ]
    prompt_tokens = [len(backend._prepare(r)[0].prompt) for r in requests]
    print(
        f"{len(requests)} prompts of {min(prompt_tokens)}-{max(prompt_tokens)} tokens, "
        f"max_tokens={args.max_tokens}, batch {args.batch}, {args.threads} thread(s)"
    )
    timings: dict[str, float] = {}
    outputs: dict[str, list[str]] = {}
    for label, batch in (("one-at-a-time", 1), ("batched", args.batch)):
        backend.preferred_batch = batch
        backend.regenerated_near_ties = 0
        start = time.perf_counter()
        results = backend.generate(requests)
        seconds = time.perf_counter() - start
        generated = sum(r.n_generated_tokens for r in results)
        timings[label] = seconds
        outputs[label] = [r.text for r in results]
        print(
            f"{label:>14}: {seconds:7.1f} s, {generated / seconds:6.2f} generated tok/s, "
            f"{(generated + sum(prompt_tokens)) / seconds:7.1f} tok/s incl. prompt"
            + (f", {backend.regenerated_near_ties} rows redone (near tie)" if batch > 1 else "")
        )
    print(f"speed-up: {timings['one-at-a-time'] / timings['batched']:.2f}x")
    print(f"texts equal: {outputs['one-at-a-time'] == outputs['batched']}")


if __name__ == "__main__":
    main()
