"""The same log-likelihood requests through lm-evaluation-harness's own HF model class and through ours.

Both read SmolLM2-135M-Instruct from the same fp32 safetensors folder (our GGUF
cache), with the same (context, continuation) strings: real book text from the
shared corpus, contexts ending right before a chapter heading. lm-eval scores
each pair with a full forward; ours reads each context once (shared prefix).

    PYTHONPATH=src .venv/bin/python bench/vs_lm_eval.py [--instances 2] [--context-chars 6000] [--gguf]

Needs lm-eval in the venv: ``.venv/bin/pip install "lm-eval[hf]" torch==2.13.0``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before any hub client is imported
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]


def cut_at_space(text: str, chars: int, *, keep: str) -> str:
    """About ``chars`` characters of ``text`` (its end or start), cut at whitespace so no word is split."""
    if keep == "end":
        piece = text[-chars:]
        return piece[piece.find(" ") + 1 :] if " " in piece[:200] else piece
    piece = text[:chars]
    return piece[: piece.rfind(" ")] if " " in piece[-200:] else piece


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--instances", type=int, default=2)
    parser.add_argument(
        "--context-chars", type=int, default=6000, help="context length in characters (~1.4K tokens)"
    )
    parser.add_argument("--candidate-chars", type=int, default=500)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--gguf", action="store_true", help="let lm-eval load the GGUF file itself (slower)")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT / "bench"))
    from longread.models import LoglikelihoodRequest, load_backend
    from longread.models.hf.backend import HFBackend
    from longread.models.hf.loading import gguf_cache_folder, smollm2_gguf_path
    from longread.models.threads import set_threads
    from shared_prefix import build_instances  # the same instances as bench/shared_prefix.py

    threads = set_threads(args.threads)
    pairs: list[tuple[str, list[str]]] = []
    for inst in build_instances(args.instances, args.context_chars // 4):
        context = cut_at_space(inst.context, args.context_chars, keep="end")
        pairs.append(
            (context, [cut_at_space(c, args.candidate_chars, keep="start") for c in inst.candidates])
        )

    ours = load_backend("smollm2", threads=threads)  # also makes sure the safetensors cache exists
    assert isinstance(ours, HFBackend)
    folder = gguf_cache_folder(smollm2_gguf_path(), "smollm2")

    try:
        from lm_eval.api.instance import Instance
        from lm_eval.models.huggingface import HFLM
    except Exception:
        print("lm-eval is not importable:\n" + traceback.format_exc())
        raise SystemExit(1) from None
    try:
        if args.gguf:
            gguf = smollm2_gguf_path()
            lm = HFLM(
                pretrained=str(gguf.parent), gguf_file=gguf.name, device="cpu", dtype="float32", batch_size=1
            )
        else:
            lm = HFLM(pretrained=str(folder), device="cpu", dtype="float32", batch_size=1)
    except Exception:
        print(f"lm-eval's HFLM could not load the model offline from {folder}:\n" + traceback.format_exc())
        raise SystemExit(1) from None

    instances = [
        Instance(request_type="loglikelihood", doc={}, arguments=(context, candidate), idx=i)
        for context, candidates in pairs
        for i, candidate in enumerate(candidates)
    ]
    start = time.perf_counter()
    theirs = lm.loglikelihood(instances, disable_tqdm=True)
    lm_eval_seconds = time.perf_counter() - start

    requests = [LoglikelihoodRequest(context, tuple(candidates)) for context, candidates in pairs]
    start = time.perf_counter()
    results = ours.loglikelihood(requests)
    our_seconds = time.perf_counter() - start

    print(
        f"\nSmolLM2-135M fp32 from {folder}\n"
        f"lm-eval {lm_eval_version()} HFLM max_length {lm.max_length}, ours {ours.max_length}"
    )
    print(
        f"{'inst':>4} {'cand':>4} {'ctx tok':>7} {'cont tok':>8} {'lm-eval':>12} {'longread':>12} "
        f"{'|Δ|':>9} {'greedy':>7}"
    )
    flat = [(r, i, s) for r, result in enumerate(results) for i, s in enumerate(result.scores)]
    worst = 0.0
    for (r, i, score), (their_logprob, their_greedy) in zip(flat, theirs, strict=True):
        delta = abs(score.logprob - their_logprob)
        worst = max(worst, delta)
        same = "same" if score.is_greedy == their_greedy else "DIFF"
        print(
            f"{r:>4} {i:>4} {results[r].context_tokens_kept:>7} {score.n_tokens:>8} "
            f"{their_logprob:>12.5f} {score.logprob:>12.5f} {delta:>9.2e} {same:>7}"
        )
    print(f"max |Δ| = {worst:.2e} nats over {len(flat)} candidates (target ≤ 1e-3)")
    print(
        f"time: lm-eval {lm_eval_seconds:.1f} s, longread shared {our_seconds:.1f} s, "
        f"ratio {lm_eval_seconds / our_seconds:.2f}x ({threads} torch thread(s))"
    )


def lm_eval_version() -> str:
    from importlib.metadata import version

    return version("lm-eval")


if __name__ == "__main__":
    try:
        import longread  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(ROOT / "src"))
    main()
