"""Model specs, folders and the safetensors cache: what loads, and the errors a user can act on."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
import torch

from longread.errors import LongreadError
from longread.models import ModelLoadError, ModelSpecError, load_backend
from longread.models.hf import CACHE_MARKER, cache_root, cached_folder
from longread.models.hf.loading import (
    LoadedModel,
    gguf_cache_folder,
    load_folder,
    load_random,
    loading_arguments,
    smollm2_gguf_path,
)
from longread.models.requests import LoglikelihoodRequest
from tests.models_fixtures import backend


@pytest.fixture(scope="module")
def saved_tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """random:gpt2 saved as an ordinary Hugging Face folder."""
    folder = tmp_path_factory.mktemp("tiny-gpt2")
    loaded = backend("random:gpt2").loaded
    loaded.model.save_pretrained(folder)
    loaded.tokenizer.save_pretrained(folder)
    return folder


def _weights(folder: Path) -> Path:
    return next(folder.glob("*.safetensors"))


def _copy(folder: Path, destination: Path) -> Path:
    destination.mkdir()
    for file in folder.iterdir():
        (destination / file.name).write_bytes(file.read_bytes())
    return destination


def test_unknown_spec_lists_the_known_forms() -> None:
    with pytest.raises(ModelSpecError, match=r"unknown model spec 'gpt5'.*hf:PATH.*gguf:FILE"):
        load_backend("gpt5")
    with pytest.raises(ModelSpecError, match="llama"):
        load_backend("random:mamba")
    with pytest.raises(ModelSpecError, match="give a path"):
        load_backend("hf:")


def test_hf_folder_loads_with_the_same_logits(saved_tiny_model: Path) -> None:
    loaded = load_backend(f"hf:{saved_tiny_model}")
    original = backend("random:gpt2")
    ids = torch.tensor([[464, 3290, 318, 257]])
    with torch.inference_mode():
        assert torch.equal(loaded.model(ids).logits, original.model(ids).logits)  # type: ignore[attr-defined]
    assert loaded.describe()["weights"] == str(saved_tiny_model)
    assert loaded.max_length == 1024


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match=r"nowhere: folder does not exist"):
        load_backend(f"hf:{tmp_path / 'nowhere'}")


def test_folder_without_config(saved_tiny_model: Path, tmp_path: Path) -> None:
    folder = _copy(saved_tiny_model, tmp_path / "m")
    (folder / "config.json").unlink()
    with pytest.raises(ModelLoadError, match=r"no config.json") as info:
        load_backend(f"hf:{folder}")
    assert str(folder) in str(info.value)


def test_folder_without_weights(saved_tiny_model: Path, tmp_path: Path) -> None:
    folder = _copy(saved_tiny_model, tmp_path / "m")
    _weights(folder).unlink()
    with pytest.raises(ModelLoadError, match=r"no weights"):
        load_backend(f"hf:{folder}")


def test_truncated_weights(saved_tiny_model: Path, tmp_path: Path) -> None:
    folder = _copy(saved_tiny_model, tmp_path / "m")
    weights = _weights(folder)
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    with pytest.raises(ModelLoadError, match=r"incomplete or corrupt") as info:
        load_backend(f"hf:{folder}")
    assert str(folder) in str(info.value)


def test_weights_of_another_model(saved_tiny_model: Path, tmp_path: Path) -> None:
    folder = _copy(saved_tiny_model, tmp_path / "m")
    config = json.loads((folder / "config.json").read_text())
    config["n_layer"] = 3  # the file holds two layers
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelLoadError, match=r"lack \d+ tensors"):
        load_backend(f"hf:{folder}")


def test_gguf_paths(tmp_path: Path, saved_tiny_model: Path) -> None:
    with pytest.raises(ModelLoadError, match="file does not exist"):
        load_backend(f"gguf:{tmp_path / 'x.gguf'}")
    with pytest.raises(ModelLoadError, match="is a folder"):
        load_backend(f"gguf:{saved_tiny_model}")
    not_gguf = tmp_path / "fake.gguf"
    not_gguf.write_bytes(b"this is not a gguf file")
    monkey_root = tmp_path / "cache"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LONGREAD_CACHE", str(monkey_root))
        with pytest.raises(ModelLoadError, match="cannot read this GGUF"):
            load_backend(f"gguf:{not_gguf}")
        # the failed build left no half cache behind
        assert [p for p in (monkey_root / "models").iterdir() if p.is_dir()] == []
    with pytest.raises(ModelLoadError, match="use gguf:FILE"):
        load_backend(f"hf:{not_gguf}")


def test_cache_root_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LONGREAD_CACHE", str(tmp_path))
    assert cache_root() == tmp_path
    assert gguf_cache_folder(smollm2_gguf_path(), "smollm2").parent == tmp_path / "models"


def test_smollm2_comes_from_its_safetensors_cache() -> None:
    smol = backend("smollm2")
    folder = Path(smol.describe()["weights"])
    assert folder == gguf_cache_folder(smollm2_gguf_path(), "smollm2")
    marker = json.loads((folder / CACHE_MARKER).read_text())
    assert marker["files"]["model.safetensors"] == (folder / "model.safetensors").stat().st_size > 500_000_000
    # an ordinary HF folder: other loaders (lm-eval, vLLM) must not be sent looking for the GGUF file
    assert "quantization_config" not in json.loads((folder / "config.json").read_text())
    assert smol.max_length == 8192
    assert type(smol.model).__name__ == "LlamaForCausalLM"


class CountingBuilder:
    """Builds a cache folder from a saved model folder and counts how often it had to."""

    def __init__(self, source: Path) -> None:
        self.source = source
        self.builds = 0

    def __call__(self, destination: Path) -> None:
        self.builds += 1
        for file in self.source.iterdir():
            (destination / file.name).write_bytes(file.read_bytes())


def _load(folder: Path) -> LoadedModel:
    model, tokenizer = load_folder(folder)
    return LoadedModel(model, tokenizer, "tiny", str(folder), "test")


def test_cache_is_built_once_and_rebuilt_when_corrupt(saved_tiny_model: Path, tmp_path: Path) -> None:
    build = CountingBuilder(saved_tiny_model)
    folder = tmp_path / "models" / "tiny-abc"
    cached_folder(folder, build, "test", _load)
    cached_folder(folder, build, "test", _load)
    assert build.builds == 1
    # truncated: caught by the size check in the marker
    weights = _weights(folder)
    weights.write_bytes(weights.read_bytes()[:1000])
    cached_folder(folder, build, "test", _load)
    assert build.builds == 2
    # same size but garbage: caught when loading fails
    data = bytearray(weights.read_bytes())
    data[:16] = b"\xff" * 16
    weights.write_bytes(bytes(data))
    loaded = cached_folder(folder, build, "test", _load)
    assert build.builds == 3
    assert loaded.model.config.n_layer == 2
    # a folder without its marker (a crash before the rename cannot leave one, but a copy can)
    (folder / CACHE_MARKER).unlink()
    cached_folder(folder, build, "test", _load)
    assert build.builds == 4
    # no temporary folders left (the builders' lock file stays, empty)
    assert sorted(p.name for p in folder.parent.iterdir()) == [".tiny-abc.lock", "tiny-abc"]


def test_processes_building_one_cache_take_turns_and_build_it_once(
    saved_tiny_model: Path, tmp_path: Path
) -> None:
    """Two builders of one folder at once (threads hold separate lock handles, as processes do): one
    builds, the other waits and loads what it wrote; neither replaces the folder under the other. (The
    load here lists the folder: transformers' own loading is not meant for two threads at once.)"""
    started = threading.Event()
    counting = CountingBuilder(saved_tiny_model)

    def slow_build(destination: Path) -> None:
        started.set()
        time.sleep(0.2)  # the second builder arrives meanwhile (any order gives one build)
        counting(destination)

    def listing(folder: Path) -> list[str]:
        return sorted(p.name for p in folder.iterdir())

    folder = tmp_path / "models" / "tiny-abc"
    loaded: list[list[str]] = []

    def builder() -> None:
        loaded.append(cached_folder(folder, slow_build, "t", listing))

    first = threading.Thread(target=builder)
    first.start()
    started.wait(timeout=60)
    second = threading.Thread(target=builder)
    second.start()
    first.join()
    second.join()
    assert counting.builds == 1 and len(loaded) == 2 and loaded[0] == loaded[1]
    assert CACHE_MARKER in loaded[0] and "config.json" in loaded[0]
    assert sorted(p.name for p in folder.parent.iterdir()) == [".tiny-abc.lock", "tiny-abc"]


def test_a_crash_while_building_leaves_no_cache(tmp_path: Path) -> None:
    def crash(destination: Path) -> None:
        (destination / "config.json").write_text("{}")
        raise KeyboardInterrupt

    folder = tmp_path / "models" / "x"
    with pytest.raises(KeyboardInterrupt):
        cached_folder(folder, crash, "test", _load)
    assert [p.name for p in folder.parent.iterdir()] == [".x.lock"]


def test_random_models_are_seeded() -> None:
    a, b = load_random("gpt2"), load_random("gpt2")
    for (name, x), (_, y) in zip(a.model.state_dict().items(), b.model.state_dict().items(), strict=True):
        assert torch.equal(x, y), name
    assert len(a.tokenizer) == 50257  # the real GPT-2 BPE, not the empty tokenizer of a wrong constructor


def test_errors_are_longread_errors() -> None:
    assert issubclass(ModelLoadError, LongreadError) and issubclass(ModelSpecError, LongreadError)


# ---------------------------------------------------------------- off the CPU


def test_cuda_bfloat16_weights_load_straight_onto_the_gpu_in_bfloat16() -> None:
    arguments = loading_arguments("bfloat16", "cuda")
    assert arguments["dtype"] is torch.bfloat16
    assert arguments["device_map"] == "cuda"  # never a float32 copy in CPU memory first
    assert loading_arguments("float16", "cuda:1")["device_map"] == "cuda:1"
    assert "device_map" not in loading_arguments("float32", "cpu")
    with pytest.raises(ModelSpecError, match="unknown device 'gpu'"):
        loading_arguments("bfloat16", "gpu")
    with pytest.raises(ModelSpecError, match="unknown dtype 'fp8'"):
        loading_arguments("fp8", "cuda")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU: --device cuda loads")
def test_cuda_without_a_gpu_is_an_error_naming_the_device(saved_tiny_model: Path) -> None:
    with pytest.raises(ModelLoadError, match="--device cuda: no CUDA GPU is visible"):
        load_folder(saved_tiny_model, dtype="bfloat16", device="cuda")
    with pytest.raises(ModelLoadError, match="or pass --device cpu"):
        load_random("llama", dtype="bfloat16", device="cuda")


def test_a_bfloat16_model_scores_like_float32_within_bfloat16_rounding() -> None:
    request = LoglikelihoodRequest("It is a truth universally acknowledged, that a", (" single man", " dog"))
    half = load_backend("random:llama", dtype="bfloat16")
    full = backend("random:llama")
    assert next(half.model.parameters()).dtype is torch.bfloat16  # type: ignore[attr-defined]
    for low, high in zip(
        half.loglikelihood([request])[0].scores,  # type: ignore[attr-defined]
        full.loglikelihood([request])[0].scores,
        strict=True,
    ):
        assert low.logprob == pytest.approx(high.logprob, abs=0.1 * low.n_tokens)
