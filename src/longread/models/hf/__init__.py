"""The local Hugging Face backend: models loaded in this process (SmolLM2, Gemma 3, any HF folder or
GGUF file), scoring with a shared prefix, batched generation and the read-along engine.
"""

from __future__ import annotations

from longread.models.hf.backend import (
    HFBackend,
    HFTokenEncoder,
)
from longread.models.hf.batch_generate import (
    TIE_MARGIN,
)
from longread.models.hf.loading import (
    LoadedModel,
    gguf_cache_folder,
    load_folder,
    load_random,
    smollm2_gguf_path,
    smollm2_tokenizer,
)
from longread.models.hf.model_cache import CACHE_MARKER, cache_root, cached_folder
from longread.models.hf.read_along import (
    ReadAlongMode,
)
from longread.models.hf.shared_prefix import (
    prefill,
    score_group_naive,
    score_group_shared,
)

__all__ = [
    "CACHE_MARKER",
    "TIE_MARGIN",
    "HFBackend",
    "HFTokenEncoder",
    "LoadedModel",
    "ReadAlongMode",
    "cache_root",
    "cached_folder",
    "gguf_cache_folder",
    "load_folder",
    "load_random",
    "prefill",
    "score_group_naive",
    "score_group_shared",
    "smollm2_gguf_path",
    "smollm2_tokenizer",
]
