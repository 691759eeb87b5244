from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from longread.models.suffixlm.config import ModelConfig
from longread.models.suffixlm.encoder import CachedEncoder, EmbeddingCache, EncoderSpec, SegmentEncoder
from longread.models.suffixlm.model import SuffixLM
from longread.models.suffixlm.segments import Segmenter
from longread.models.suffixlm.train import epoch_windows, info_nce, lr_factor
from tests.models.suffixlm.fixtures import tiny_encoder_folder


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> SegmentEncoder:
    return SegmentEncoder(EncoderSpec(str(tiny_encoder_folder(tmp_path_factory.mktemp("enc")))))


@pytest.mark.parametrize("variant", ["A", "B"])
def test_shapes_and_causality(variant: str) -> None:
    torch.manual_seed(0)
    model = SuffixLM(
        ModelConfig(
            encoder_dim=12, d_model=16, layers=2, heads=2, ffn=32, context_segments=8, variant=variant
        )
    )  # type: ignore[arg-type]
    model.eval()
    vectors = torch.randn(3, 6, 12)
    valid = torch.ones(3, 6, dtype=torch.bool)
    out = model(vectors, valid)
    assert out.shape == (3, 6, 16)
    assert torch.allclose(out.norm(dim=-1), torch.ones(3, 6), atol=1e-5)
    changed = vectors.clone()
    changed[:, 4:] = torch.randn(3, 2, 12)
    assert torch.allclose(model(changed, valid)[:, :4], out[:, :4], atol=1e-5)
    assert not torch.allclose(model(changed, valid)[:, 4:], out[:, 4:], atol=1e-3)
    scores = model.score(vectors[0], torch.randn(6, 12))
    assert scores.shape == (6,)
    with pytest.raises(ValueError):
        model(torch.randn(1, 10, 12), torch.ones(1, 10, dtype=torch.bool))


def test_right_padding_does_not_change_predictions() -> None:
    torch.manual_seed(0)
    model = SuffixLM(
        ModelConfig(encoder_dim=12, d_model=16, layers=2, heads=2, ffn=32, context_segments=8)
    ).eval()
    vectors = torch.randn(1, 4, 12)
    padded = torch.cat([vectors, torch.randn(1, 3, 12)], 1)
    valid = torch.tensor([[True] * 4 + [False] * 3])
    assert torch.allclose(
        model(padded, valid)[:, :4], model(vectors, torch.ones(1, 4, dtype=torch.bool)), atol=1e-5
    )


def test_info_nce_prefers_the_matching_target() -> None:
    targets = torch.nn.functional.normalize(torch.randn(5, 8), dim=-1)
    good = info_nce(targets, targets, torch.tensor(10.0))
    bad = info_nce(targets.roll(1, 0), targets, torch.tensor(10.0))
    assert good < bad


def test_schedule_warms_up_then_decays() -> None:
    assert lr_factor(0, 10, 100) == pytest.approx(0.1)
    assert lr_factor(9, 10, 100) == pytest.approx(1.0)
    assert lr_factor(55, 10, 100) == pytest.approx(0.5)
    assert lr_factor(100, 10, 100) == pytest.approx(0.0)


def test_windows_cover_each_book_and_depend_on_seed_and_epoch() -> None:
    windows = epoch_windows([30, 5], width=9, seed=0, epoch=0)
    assert all(2 <= w.length <= 9 and w.start + w.length <= [30, 5][w.book] for w in windows)
    predicted = {(w.book, w.start + i) for w in windows for i in range(1, w.length)}
    assert {(0, i) for i in range(1, 30)} <= predicted | {(0, i) for i in range(1, 9)}
    assert epoch_windows([30, 5], 9, 0, 0) == windows
    assert epoch_windows([30, 5], 9, 0, 1) != windows


def test_cache_second_run_encodes_nothing_and_padding_is_invisible(
    encoder: SegmentEncoder, tmp_path: Path
) -> None:
    segmenter = Segmenter(encoder.tokenize)
    segments = segmenter.segments("The ship sailed north. " * 40 + "Ice closed in. The fog was thick.")
    segments.append(segments[0][:7])  # a short one beside long ones in one batch
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    first = CachedEncoder(encoder, cache, batch_size=64)
    vectors = first.encode(segments)
    assert first.encoded == len(set(segments))
    again = CachedEncoder(encoder, EmbeddingCache(tmp_path / "c.sqlite"))
    assert np.array_equal(again.encode(segments), vectors)
    assert again.encoded == 0
    alone = CachedEncoder(encoder, None).encode([segments[-1]])
    assert np.allclose(alone[0], vectors[-1], atol=1e-5)
    assert vectors.shape == (len(segments), encoder.dim)


def test_layers_cut_and_fingerprint(tmp_path: Path) -> None:
    folder = str(tiny_encoder_folder(tmp_path))
    one = SegmentEncoder(EncoderSpec(folder, layers=1))
    both = SegmentEncoder(EncoderSpec(folder))
    assert len(one.model.encoder.layer) == 1
    assert one.fingerprint != both.fingerprint
    with pytest.raises(ValueError):
        SegmentEncoder(EncoderSpec(folder, layers=5))
