"""NarrativeXL summaries on real scenes: statuses, seconds per scene, and how often the tag rule is followed.

Cuts Pride and Prejudice into the authors' scenes (3,000 characters, 300 overlap),
summarises the first ``--scenes`` with the default :class:`SummarySettings`
(fresh cache in a temporary folder), prints the statuses and their reasons and
seconds per scene; then asks the same scenes' summary prompts, and distortion
prompts on the summaries, WITH the authors' BEGIN ANSWER tag rule and counts
the answers that carry the tag.

    .venv/bin/python bench/narrativexl_summaries.py --scenes 20 --threads 1
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

import torch

from longread.benchmarks.narrativexl.scenes import cut_scenes
from longread.benchmarks.narrativexl.summaries import SummarySettings, prompts, summarise_scenes
from longread.benchmarks.narrativexl.summaries.cache import GenerationCache
from longread.documents.reader import read_book
from longread.models.hf.backend import HFBackend
from longread.models.registry import load_backend
from longread.models.requests import GenerateRequest

BOOK = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "gutenberg" / "pg1342.txt.gz"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scenes", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--tag-tokens", type=int, default=24, help="tokens generated to look for the tag")
    args = parser.parse_args()
    backend = load_backend("smollm2", threads=args.threads)
    assert isinstance(backend, HFBackend)
    scenes = list(cut_scenes(read_book(BOOK)).scenes)[: args.scenes]
    settings = SummarySettings()
    with tempfile.TemporaryDirectory() as folder:
        cache = GenerationCache(Path(folder))
        start = time.perf_counter()
        made = summarise_scenes(scenes, backend, cache, settings)
        seconds = time.perf_counter() - start
        print(
            f"{len(scenes)} scenes, {cache.made} generations in {seconds:.0f} s: "
            f"{seconds / len(scenes):.1f} s per scene ({torch.get_num_threads()} thread(s))"
        )
        print("statuses:", dict(Counter(s.status for s in made)))
        reasons: Counter[str] = Counter()
        for item in made:
            for part in item.comment.split("; ") if item.comment else []:
                reasons[part.split(" (")[0].split(":")[0]] += 1
        print("reasons:", dict(reasons.most_common()))
        print("distortions per scene:", [len(s.distorted) for s in made])
        for item in made[:3]:
            print(
                f"--- scene {item.index} [{item.status}] {item.comment}\n"
                f"{item.summary}\n~~ {item.distorted[:1]}"
            )
        tagged = backend.generate(
            [
                GenerateRequest(prompts.summarize_chunk(s.overlapped, tag=True), max_tokens=args.tag_tokens)
                for s in scenes
            ]
        )
        true_summaries = [s.summary for s in made if s.summary]
        tagged_false = backend.generate(
            [
                GenerateRequest(prompts.create_false_summary(s, tag=True), max_tokens=args.tag_tokens)
                for s in true_summaries
            ]
        )
        with_tag = sum(prompts.BEGIN_ANSWER_TAG in r.text for r in tagged)
        with_tag_false = sum(prompts.BEGIN_ANSWER_TAG in r.text for r in tagged_false)
        print(
            f"tag followed: summaries {with_tag}/{len(tagged)}, "
            f"distortions {with_tag_false}/{len(tagged_false)}"
        )
        print("tagged openings:", [r.text[:40] for r in tagged[:5]])


if __name__ == "__main__":
    main()
