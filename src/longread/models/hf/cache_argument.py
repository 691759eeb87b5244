"""The keyword a model's ``forward`` takes its KV cache by, whichever transformers is installed.

transformers up to 5.2 names it ``past_key_values``; later 5.x releases (5.24, the locked one, among
them) name it ``cache`` and warn on every forward given the old name (removed in 5.40). longread reads
the name from the forward's signature, once per model class, so the same code runs on both without a
warning, and reads a forward's returned cache by the name its output holds.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

NEW, OLD = "cache", "past_key_values"


@functools.cache
def _keyword_of(forward: Any) -> str:
    return NEW if NEW in inspect.signature(forward).parameters else OLD


def cache_keyword(model: Any) -> str:
    """``"cache"`` when ``model.forward`` takes one by that name, else ``"past_key_values"``."""
    return _keyword_of(type(model).forward)


def with_cache(model: Any, cache: Any) -> dict[str, Any]:
    """``{keyword: cache}``, to be spread into a call of ``model``."""
    return {cache_keyword(model): cache}


def output_cache(outputs: Any) -> Any:
    """The cache a forward returned (``outputs.cache`` where the output holds one by that name)."""
    keys = outputs.keys()
    return outputs[NEW] if NEW in keys else outputs[OLD]
