"""The reading of a pressed cache, checked without kvpress (the project's venv): on an uncompressed cache
the per-layer masks give the shared-prefix engine's log-probs — on Gemma 3 past its 512-token sliding
window too — and on a cache with entries dropped by hand (a different number per layer too, as PyramidKV
leaves it), packed candidates never see each other."""

from __future__ import annotations

import gzip

import pytest
import torch

from longread.models.hf.pressed.layer_masks import MaskPlan, layer_mask, layer_windows
from longread.models.hf.pressed.prefill import KeptCache
from longread.models.hf.pressed.reading import PressedRead, extend, score_pressed
from longread.models.hf.shared_prefix import prefill, score_group_shared
from longread.models.press_spec import PressSpec
from longread.models.tolerance import summed_logprob_tolerance
from tests.helpers import needs_shared
from tests.models_fixtures import PRIDE_AND_PREJUDICE, backend

pytestmark = needs_shared
NOT_A_PRESS = PressSpec("none", 0.0)


def _ids(spec: str, count: int) -> list[int]:
    with gzip.open(PRIDE_AND_PREJUDICE, "rt", encoding="utf-8") as handle:
        text = handle.read()[30_000:50_000]
    return backend(spec).encoder.encode(text)[:count]


def _read(spec: str, context: list[int], question: list[int]) -> PressedRead:
    model = backend(spec).model
    state = prefill(model, context, 4096)
    kept = KeptCache(NOT_A_PRESS, len(context), (len(context),), ())
    read = PressedRead(state.cache, len(context), kept)
    extend(model, read, question)
    return read


@pytest.mark.parametrize("spec", ["smollm2", "gemma3"])
def test_the_masks_give_the_shared_prefix_log_probs_on_a_full_cache(spec: str) -> None:
    ids = _ids(spec, 760)
    context, question, last = ids[:680], ids[680:700], ids[700]
    candidates = [ids[701:733], ids[701:760], ids[100:140]]
    model = backend(spec).model
    read = _read(spec, context, question)
    pressed = score_pressed(model, read, last, candidates, batch_size=8, token_budget=1024)
    reference = score_group_shared(model, [*context, *question, last], candidates, prefill_chunk=4096)
    for got, want, tokens in zip(pressed, reference, candidates, strict=True):
        assert got.logprob == pytest.approx(want.logprob, abs=summed_logprob_tolerance(len(tokens)))
        assert got.is_greedy == want.is_greedy
    if spec == "gemma3":  # the context is past the sliding window: its layers hold the last 511 tokens
        windows = layer_windows(model)
        assert {w for w in windows if w} == {512}
        assert {
            int(layer.keys.shape[-2]) for layer, w in zip(read.cache.layers, windows, strict=True) if w
        } == {511}


def test_a_candidate_packed_with_others_scores_as_it_does_alone_on_a_cut_cache() -> None:
    model = backend("gemma3").model
    ids = _ids("gemma3", 700)
    read = _read("gemma3", ids[:600], [])
    for index, layer in enumerate(read.cache.layers):  # a press by hand: every other entry of full layers
        if layer_windows(model)[index] is None:
            layer.keys, layer.values = layer.keys[:, :, ::2], layer.values[:, :, ::2]
    candidates = [ids[601:640], ids[601:620], ids[200:260]]
    packed = score_pressed(model, read, ids[600], candidates, batch_size=8, token_budget=1024)
    for candidate, together in zip(candidates, packed, strict=True):
        (alone,) = score_pressed(model, read, ids[600], [candidate], batch_size=8, token_budget=1024)
        assert alone.logprob == pytest.approx(together.logprob, abs=summed_logprob_tolerance(len(candidate)))


def test_layers_that_keep_different_lengths_each_get_their_own_mask() -> None:
    """As PyramidKV leaves a cache (measured with kvpress: SmolLM2's 30 layers keep 191 down to 64 of 255):
    each layer keeps its own number of entries; a packed candidate still scores as it does alone, and the
    scores differ from the uncut cache's."""
    model = backend("smollm2").model
    ids = _ids("smollm2", 360)
    candidates = [ids[301:330], ids[301:312], ids[100:140]]
    full = score_pressed(
        model, _read("smollm2", ids[:300], []), ids[300], candidates, batch_size=8, token_budget=1024
    )
    read = _read("smollm2", ids[:300], [])
    kept = [300 - 8 * index for index in range(len(read.cache.layers))]
    for layer, keep in zip(read.cache.layers, kept, strict=True):  # each layer's first entries and its last
        chosen = torch.cat([torch.arange(4), torch.arange(300 - keep + 4, 300)])
        layer.keys, layer.values = layer.keys[:, :, chosen], layer.values[:, :, chosen]
    assert [int(layer.keys.shape[-2]) for layer in read.cache.layers] == kept
    packed = score_pressed(model, read, ids[300], candidates, batch_size=8, token_budget=1024)
    for candidate, together, uncut in zip(candidates, packed, full, strict=True):
        (alone,) = score_pressed(model, read, ids[300], [candidate], batch_size=8, token_budget=1024)
        assert alone.logprob == pytest.approx(together.logprob, abs=summed_logprob_tolerance(len(candidate)))
        assert together.logprob != uncut.logprob


def test_a_sliding_layer_mask_applies_the_window_to_old_and_new_tokens() -> None:
    plan = MaskPlan.packed(read=600, lengths=[3, 2])
    mask = layer_mask(plan, cached=511, window=512, device=torch.device("cpu"), dtype=None)[0, 0]
    assert mask.shape == (5, 516)
    # the first new token (position 600) sees the 511 cached (89 … 599) and itself
    assert bool(mask[0, :511].all()) and bool(mask[0, 511]) and not bool(mask[0, 512:].any())
    # position 602 no longer sees position 89 and 90 (602 − 512 = 90 is out of the window)
    assert not bool(mask[2, 0]) and not bool(mask[2, 1]) and bool(mask[2, 2:511].all())
    # the second segment restarts at position 600 and never sees the first
    assert bool(mask[3, :511].all()) and not bool(mask[3, 511:514].any()) and bool(mask[3, 514])
    full = layer_mask(plan, cached=300, window=None, device=torch.device("cpu"), dtype=torch.float32)[0, 0]
    assert full.shape == (5, 305) and float(full[4, :300].max()) == 0.0 and float(full[4, 303]) == 0.0
    assert float(full[4, 302]) == torch.finfo(torch.float32).min
