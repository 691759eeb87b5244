"""SuffixLM throughput: encoding, training on cached vectors, and ranking ChapterBreak instances.

    .venv/bin/python bench/suffixlm.py [--book ../shared/corpus/gutenberg/pg84.txt.gz]
        [--data heldout.jsonl] [--model suffixlm] [--instances 8] [--prefix-tokens 2048]

Prints segments/s of the frozen encoder (first 2 layers and all 6, no cache),
training segments/s of the causal Transformer on cached vectors (one step =
batch × (context + 1) segments, forward + backward + Adam), and ranking
throughput on real instances with a cold cache and again with a warm one.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from longread.documents.reader import read_book
from longread.models.requests import RankRequest
from longread.models.suffixlm.checkpoint import load, shipped_path
from longread.models.suffixlm.config import ModelConfig
from longread.models.suffixlm.data import book_segments
from longread.models.suffixlm.encoder import CachedEncoder, EncoderSpec, SegmentEncoder
from longread.models.suffixlm.model import SuffixLM
from longread.models.suffixlm.segments import Segmenter
from longread.models.suffixlm.train import info_nce

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "gutenberg"


def encode_rate(book: Path, layers: int | None, count: int) -> float:
    encoder = SegmentEncoder(EncoderSpec(layers=layers))
    segments = book_segments(read_book(book), Segmenter(encoder.tokenize), count + 64).segments
    cached = CachedEncoder(encoder, None)
    cached.encode(segments[:64])  # warm-up
    started = time.perf_counter()
    cached.encode(segments[64 : 64 + count])
    return count / (time.perf_counter() - started)


def train_rate(config: ModelConfig, batch: int, steps: int) -> float:
    torch.manual_seed(0)
    model = SuffixLM(config).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    width = config.context_segments + 1
    vectors = torch.randn(batch, width, config.encoder_dim)
    valid = torch.ones(batch, width - 1, dtype=torch.bool)
    started = time.perf_counter()
    for _ in range(steps):
        predictions = model(vectors[:, :-1], valid).reshape(-1, config.d_model)
        loss = info_nce(
            predictions, model.targets(vectors[:, 1:].reshape(-1, config.encoder_dim)), model.scale()
        )
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return steps * batch * width / (time.perf_counter() - started)


def rank_rates(model: Path, data: Path, instances: int, prefix_tokens: int) -> list[tuple[str, float, float]]:
    from longread.benchmarks.chapterbreak.io import load_instances
    from longread.models.suffixlm.backend import SuffixLMRanker

    chosen = load_instances(data)[:instances]
    requests = [RankRequest(i.prefix, (i.gold, *i.negatives), prefix_tokens, 128) for i in chosen]
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        ranker = SuffixLMRanker(load(model), cache_dir=Path(cache))
        for label in ("cold cache", "warm cache"):
            tokens: list[int] = []
            started = time.perf_counter()
            ranker.rank(requests, tokens.append)
            elapsed = time.perf_counter() - started
            rows.append((label, len(requests) / elapsed, sum(tokens) / elapsed))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--book", type=Path, default=SHARED / "pg84.txt.gz")
    parser.add_argument("--data", type=Path, default=None, help="ChapterBreak JSONL for the ranking figure")
    parser.add_argument("--model", type=Path, default=None, help="checkpoint (default: the shipped one)")
    parser.add_argument("--segments", type=int, default=192)
    parser.add_argument("--instances", type=int, default=8)
    parser.add_argument("--prefix-tokens", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    checkpoint = args.model or shipped_path()
    config = load(checkpoint).config.model
    for layers in (2, None):
        rate = encode_rate(args.book, layers, args.segments)
        print(
            f"encode, MiniLM {'all 6' if layers is None else layers} layers, no cache: {rate:.1f} segments/s"
        )
    width = config.context_segments + 1
    rate = train_rate(config, 8, 10)
    print(f"train, {config.layers} layers d={config.d_model}, batch 8 × {width}: {rate:.0f} segments/s")
    if args.data is not None:
        for label, per_s, tokens_per_s in rank_rates(
            checkpoint, args.data, args.instances, args.prefix_tokens
        ):
            print(
                f"rank {args.instances} instances at {args.prefix_tokens} tokens, {label}: "
                f"{per_s:.2f} instances/s, {tokens_per_s:.0f} tokens/s"
            )


if __name__ == "__main__":
    main()
