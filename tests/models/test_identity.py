"""Which runs are of one model read the same way: the rule the report's agreement check and the key-token
cache share. The local description is a stored run's own (random GPT-2); the others are what the served,
pressed and other backends write beside it (their ``describe()`` fields)."""

from __future__ import annotations

import json
from typing import Any

from longread.models.identity import (
    computed_alike,
    how_they_differ,
    model_name,
    same_model,
    share_a_name,
    window_difference,
)
from tests.helpers import REPO_ROOT

STORED = REPO_ROOT / "tests" / "data" / "stored_run" / "run" / "config.json"


def _local() -> dict[str, Any]:
    model = json.loads(STORED.read_text())["config"]["model"]
    assert model["weights_fingerprint"] and model["spec"] == "random:gpt2"
    return dict(model)


def test_a_served_model_of_the_same_name_is_the_same_model_read_alike() -> None:
    served = {"backend": "openai", "name": "random:gpt2", "model": "random:gpt2", "max_length": "1024"}
    assert same_model(_local(), served) and computed_alike(_local(), served)
    hub = {"backend": "openai", "name": "openai-community/gpt2", "model": "openai-community/gpt2"}
    assert not same_model(_local(), hub) and not share_a_name(_local(), hub)  # nothing says it is: silent


def test_another_dtype_press_architecture_window_device_or_read_along_is_read_another_way() -> None:
    local = _local()
    assert local["max_length"] == "1024" and local["device"] == "cpu"
    for field, value in (
        ("dtype", "bfloat16"),
        ("press", "snapkv:0.5"),
        ("architecture", "LlamaForCausalLM"),  # random:llama has the same seed fingerprint as random:gpt2
        ("read_along_mode", "replay"),
        ("device", "cuda:0"),
    ):
        other = {**local, field: value}
        assert same_model(local, other), field  # the same weights…
        assert not computed_alike(local, other), field  # …read another way
        said = how_they_differ(local, other)
        assert said == [f"{field} {local.get(field) or 'none'} ≠ {value}"], said
    assert computed_alike(local, dict(local)) and how_they_differ(local, dict(local)) == []


def test_another_window_is_compared_and_named() -> None:
    """A window decides what is cut, not how the model computes: runs of two windows are compared (where
    neither cut a row they agree) and the report names the windows beside any difference."""
    local = _local()
    other = {**local, "max_length": "512"}
    assert computed_alike(local, other) and window_difference(local, other) == "max_length 1024 ≠ 512"
    assert window_difference(local, dict(local)) is None
    assert window_difference(local, {k: v for k, v in local.items() if k != "max_length"}) is None


def test_a_press_at_ratio_zero_is_the_full_cache() -> None:
    local = _local()
    for zero in ("snapkv:0", "knorm:0.0", "streaming_llm:0"):
        assert computed_alike(local, {**local, "press": zero, "kvpress": "0.5.5"}), zero
    assert not computed_alike(local, {**local, "press": "snapkv:0.25"})
    assert how_they_differ({**local, "press": "knorm:0"}, {**local, "press": "snapkv:0.5"}) == [
        "press knorm:0 ≠ snapkv:0.5"
    ]


def test_every_content_hash_both_hold_decides() -> None:
    local = _local()
    old = {**local, "weights_fingerprint": "481feb0314dca03c"}  # a fingerprint of another scheme or weights
    assert not same_model(local, old) and share_a_name(local, old)
    assert how_they_differ(local, old) == [
        f"weights_fingerprint {local['weights_fingerprint']} ≠ 481feb0314dca03c"
    ]
    retrained = (
        {"spec": "suffixlm:/m", "weights_sha256": "a"},
        {"spec": "suffixlm:/m", "weights_sha256": "b"},
    )
    assert not same_model(*retrained) and share_a_name(*retrained)  # the same path, other weights
    assert same_model(
        {"spec": "suffixlm:/m", "weights_sha256": "a"}, {"spec": "suffixlm:/m", "weights_sha256": "a"}
    )
    assert model_name(local) == "random:gpt2" and model_name({}) == "an unnamed model"
