"""What a KV-cache press saves in memory: Gemma 3 270M reading 8K and 32K tokens of a real novel under the
full cache and each compression ratio, each setting in a child process of its own (so every peak is its
own), side by side.

    .venv-presses/bin/python bench/presses_memory.py [--lengths 8192,32768] [--press snapkv]
        [--ratios 0.25,0.5,0.75] [--model gemma3]

Per setting: the KV cache kept (MB, every layer's entries × bytes per entry: exactly what the cache
holds), the process's peak RSS while reading (the child's ``ru_maxrss``: weights, activations, the cache
before and after the press), its RSS once the context is read (the cache held, the activations freed),
and the ratios against the full cache. The press compresses layer by layer during the one prefill, so the
whole cache of the layer being read exists before it is cut: the saving shows in what is held after.
Run it in the presses' environment (``make presses``); the models must be converted (``make presses``
does).
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

from longread.report.press_runs import rss_mb

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT.parent / "shared" / "corpus" / "gutenberg" / "pg1342.txt.gz"


def child(model_spec: str, length: int, press_text: str | None) -> dict[str, Any]:
    """One setting in this process: read ``length`` tokens, under ``press_text`` or the full cache."""
    import torch

    from longread.models.hf.pressed.prefill import pressed_prefill
    from longread.models.hf.shared_prefix import prefill
    from longread.models.press_spec import build_press, parse_press
    from longread.models.registry import load_backend

    backend: Any = load_backend(model_spec)
    model = backend.model
    with gzip.open(BOOK, "rt", encoding="utf-8") as handle:
        text = handle.read()
    ids = backend.encoder.encode(text)[:length]
    if len(ids) < length:
        raise SystemExit(f"{BOOK} has only {len(ids)} tokens")
    loaded = rss_mb()
    torch.set_grad_enabled(False)
    if press_text is None:
        cache = prefill(model, ids, chunk=len(ids)).cache  # one forward, as a press reads it
        per_layer = [int(layer.keys.shape[-2]) for layer in cache.layers]
    else:
        spec = parse_press(press_text)
        cache, kept = pressed_prefill(model, ids, build_press(spec), spec)
        per_layer = list(kept.per_layer)
    held = rss_mb()
    config = model.config
    heads = int(getattr(config, "num_key_value_heads", None) or config.num_attention_heads)
    head_dim = int(getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads)
    entry = 2 * heads * head_dim * next(model.parameters()).element_size()
    return {
        "length": length,
        "press": press_text or "full",
        "cache_mb": sum(per_layer) * entry / 2**20,
        "loaded_rss_mb": loaded,
        "held_rss_mb": held,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "kept_per_layer": per_layer,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lengths", default="8192,32768")
    parser.add_argument("--press", default="snapkv")
    parser.add_argument("--ratios", default="0.25,0.5,0.75")
    parser.add_argument("--model", default="gemma3")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        spec, length, press = args.child
        print(json.dumps(child(spec, int(length), None if press == "full" else press)))
        return
    settings = ["full", *(f"{args.press}:{r}" for r in args.ratios.split(","))]
    print("| tokens | setting | KV cache MB | of full | RSS once read MB | peak RSS MB | of full |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for length in (int(n) for n in args.lengths.split(",")):
        full: dict[str, Any] | None = None
        for setting in settings:
            command = [sys.executable, __file__, "--child", args.model, str(length), setting]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                print(f"| {length:,} | {setting} | failed: {done.stderr.strip().splitlines()[-1]} |")
                continue
            row = json.loads(done.stdout.strip().splitlines()[-1])
            full = full or row
            print(
                f"| {length:,} | {setting} | {row['cache_mb']:,.1f} | "
                f"{row['cache_mb'] / full['cache_mb']:.2f} | "
                f"{row['held_rss_mb']:,.0f} | {row['peak_rss_mb']:,.0f} | "
                f"{row['peak_rss_mb'] / full['peak_rss_mb']:.2f} |",
                flush=True,
            )
    print("\nWeights and activations (RSS after loading, before reading) are the same in every setting.")


if __name__ == "__main__":
    main()
