"""The KV cache goes in by the name the installed transformers' forward takes (``cache`` in the locked
release, ``past_key_values`` up to 5.2), and comes out by the name the output holds."""

from __future__ import annotations

import inspect
from typing import Any

import torch
from transformers.modeling_outputs import BaseModelOutputWithPast

from longread.models.hf import load_random
from longread.models.hf.cache_argument import cache_keyword, output_cache, with_cache


class _NewStyle(torch.nn.Module):
    def forward(self, input_ids: Any = None, cache: Any = None, use_cache: bool = False) -> Any:
        return cache


def test_the_keyword_is_the_installed_forwards() -> None:
    model = load_random("gpt2").model
    named = inspect.signature(type(model.base_model).forward).parameters
    assert cache_keyword(model.base_model) == ("cache" if "cache" in named else "past_key_values")
    assert cache_keyword(_NewStyle()) == "cache"
    assert with_cache(_NewStyle(), "kv") == {"cache": "kv"}
    assert _NewStyle()(input_ids=None, **with_cache(_NewStyle(), "kv")) == "kv"


def test_a_forward_through_the_keyword_returns_the_cache_it_filled() -> None:
    model = load_random("gpt2").model
    ids = torch.tensor([[1, 2, 3]])
    with torch.inference_mode():
        out = model(input_ids=ids, use_cache=True)
        cache = output_cache(out)
        assert cache.get_seq_length() == 3
        again = model(input_ids=torch.tensor([[4]]), **with_cache(model, cache), use_cache=True)
    assert output_cache(again).get_seq_length() == 4
    assert output_cache(BaseModelOutputWithPast(past_key_values="kv")) == "kv"
