"""Read-along vs re-reading the book for every question: same questions, same model, same answers.

A real novel (Pride and Prejudice) is cut into N scenes; after every scene one
question asks which of 6 real sentences was in the book so far (a sentence of a
scene read, four of scenes not read yet, "None of the above."). Each question
is answered twice by SmolLM2:

- read-along: the book is read once, each question forks the reading state;
- re-read: the held text is read from scratch for every question.

for two policies: the whole book fits the window, and a sliding window smaller
than the book. Printed: tokens the model processed and CPU seconds, as ratios
to *reading the book once* (every book token through the model once: one
prefill of the whole book, or of consecutive disjoint windows for the sliding
case). ``reading`` = tokens processed minus the questions' own tokens (prompt
and options, the same in every mode). The answers of both modes must be equal.

    .venv/bin/python bench/read_along.py [--scenes 10] [--scene-chars 800] [--window 600]
"""

from __future__ import annotations

import argparse
import gzip
import re
import time
from collections.abc import Sequence
from pathlib import Path

import torch
from transformers.cache_utils import DynamicCache

from longread.models.hf.backend import HFBackend
from longread.models.hf.read_along import ReadAlongMode
from longread.models.registry import load_backend
from longread.models.requests import ReadAlongRequest, ReadAlongResult, Reading, ReadingPolicy

BOOK = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "gutenberg" / "pg1342.txt.gz"
PROMPT = "\n\nQuestion: Which of the following scenes was in the book?\nAnswer:"


def scenes_of_book(n: int, size: int) -> list[str]:
    with gzip.open(BOOK, "rb") as fh:
        text = fh.read().decode("utf-8-sig").replace("\r\n", "\n")
    start = text.index("It is a truth universally acknowledged")
    scenes: list[str] = []
    while len(scenes) < n:
        end = text.index(". ", start + size) + 1
        scenes.append(re.sub(r"\s+", " ", text[start:end]).strip())
        start = end
    return scenes


def sentences(scene: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", scene) if 6 <= len(s.split()) <= 40] or [scene[:200]]


def questions(scenes: Sequence[str], policy: ReadingPolicy) -> list[ReadAlongRequest]:
    reading = Reading("pride", (scenes[0], *("\n\n" + s for s in scenes[1:])))
    asked = []
    n = len(scenes)
    for read in range(1, n + 1):
        true = sentences(scenes[(read * 7 + 3) % read])[0]
        decoys = [sentences(scenes[(read + k) % n])[-1] for k in range(4)]
        options = [" " + o for o in (*decoys[:2], true, *decoys[2:], "None of the above.")]
        asked.append(ReadAlongRequest(reading, read, PROMPT, tuple(options), policy))
    return asked


def run(
    model: HFBackend, mode: ReadAlongMode, requests: Sequence[ReadAlongRequest]
) -> tuple[list[ReadAlongResult], float]:
    engine = HFBackend(model.loaded, spec=model.spec, prefill_chunk=512, read_along_mode=mode)
    start = time.process_time()
    results = engine.read_along(requests)
    return results, time.process_time() - start


@torch.inference_mode()
def read_once(model: HFBackend, tokens: Sequence[int], window: int) -> float:
    """CPU seconds to put every book token through the model once (disjoint windows of ``window``)."""
    start = time.process_time()
    for begin in range(0, len(tokens), window):
        cache = DynamicCache(config=model.model.config)
        piece = tokens[begin : begin + window]
        for chunk in range(0, len(piece), 512):
            ids = torch.tensor([list(piece[chunk : chunk + 512])])
            model.model.base_model(input_ids=ids, past_key_values=cache, use_cache=True)
    return time.process_time() - start


def answers(results: Sequence[ReadAlongResult]) -> list[int]:
    out = []
    for result in results:
        means = [s.logprob / s.n_tokens for s in result.scores]
        out.append(means.index(max(means)))
    return out


def compare(model: HFBackend, label: str, requests: Sequence[ReadAlongRequest], window: int) -> None:
    along, t_along = run(model, "session", requests)
    reread, t_reread = run(model, "reread", requests)
    assert answers(along) == answers(reread), "read-along and re-reading gave different answers"
    worst = max(
        abs(a.logprob - b.logprob)
        for x, y in zip(along, reread, strict=True)
        for a, b in zip(x.scores, y.scores, strict=True)
    )
    reading = requests[0].reading
    tokens = [t for piece in reading.pieces for t in model.encoder.encode_plain(piece)]
    t_once = read_once(model, tokens, window)
    n_book = len(tokens)
    own = sum(r.prompt_tokens - 1 + sum(s.n_tokens for s in r.scores) for r in along)
    p_along = sum(r.processed_tokens for r in along)
    p_reread = sum(r.processed_tokens for r in reread)
    print(
        f"\n{label}: {len(requests)} questions, book {n_book} tokens, policy {along[-1].policy}, "
        f"rereads {along[-1].rereads} ({along[-1].reread_tokens} tokens)"
    )
    print(f"  same answers: yes; largest log-prob difference {worst:.2e}")
    print(f"  question tokens (prompt + options, every mode): {own}")
    print(f"  {'':10} {'tokens':>8} {'reading/book':>13} {'tokens/book':>12} {'CPU s':>8} {'CPU/book':>9}")
    print(f"  {'book once':10} {n_book:8d} {1.0:13.2f} {1.0:12.2f} {t_once:8.1f} {1.0:9.2f}")
    for name, processed, seconds in (("read-along", p_along, t_along), ("re-read", p_reread, t_reread)):
        print(
            f"  {name:10} {processed:8d} {(processed - own) / n_book:13.2f} {processed / n_book:12.2f} "
            f"{seconds:8.1f} {seconds / t_once:9.2f}"
        )
    print(f"  re-read / read-along: tokens {p_reread / p_along:.2f}x, CPU {t_reread / t_along:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scenes", type=int, default=10)
    parser.add_argument("--scene-chars", type=int, default=800)
    parser.add_argument("--window", type=int, default=600, help="book tokens held in the sliding case")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model = load_backend("smollm2")
    assert isinstance(model, HFBackend)
    scenes = scenes_of_book(args.scenes, args.scene_chars)
    compare(model, "fits the window", questions(scenes, ReadingPolicy()), model.max_length)
    compare(model, "sliding window", questions(scenes, ReadingPolicy(window=args.window)), args.window)


if __name__ == "__main__":
    main()
