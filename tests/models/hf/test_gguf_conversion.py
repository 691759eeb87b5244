"""The shipped GGUFs convert to their own tokenizers, under the installed transformers: SmolLM2's adds no
start token and ends on ``<|im_end|>``, Gemma 3's adds ``<bos>``, and both split a real passage into the ids
recorded from transformers 5.24 (5.2.0 built a CodeLlama tokenizer that adds ``<|im_start|>`` for SmolLM2,
and split Gemma's text otherwise). A converted folder names the release that converted it."""

from __future__ import annotations

from pathlib import Path

import pytest
import transformers

from longread.models.errors import ModelLoadError
from longread.models.hf import gguf_reader
from longread.models.hf.loading import load_gguf, smollm2_gguf_path
from longread.models.hf.model_cache import _file_fingerprint
from tests.models_fixtures import backend

TEXT = (
    "CHAPTER I.\n\nIt was a dark and stormy night; the rain fell in torrents — except at occasional "
    "intervals.\n\n“Hello,” said Mr. Darcy's 3 friends."
)
SMOLLM2_IDS = [
    5229, 41958, 339, 30, 198, 198, 1589, 436, 253, 3605, 284, 43471, 3163, 43, 260, 5249, 6641, 281, 37002,
    99, 1841, 2560, 418, 15373, 12752, 30, 198, 198, 1585, 19556, 1447, 1137, 4994, 30, 9117, 873, 506, 216,
    35, 2428, 30,
]  # fmt: skip
GEMMA3_IDS = [
    2, 43643, 564, 236761, 108, 1509, 691, 496, 4996, 532, 89373, 3446, 236793, 506, 6927, 11561, 528, 71383,
    236751, 2192, 4533, 657, 33743, 20312, 236761, 108, 236913, 9259, 2130, 1176, 3186, 236761, 138695,
    236789, 236751, 236743, 236800, 4690, 236761,
]  # fmt: skip


def test_smollm2_converts_to_its_own_tokenizer() -> None:
    model = backend("smollm2")
    tokenizer = model.tokenizer
    assert tokenizer.encode(TEXT) == SMOLLM2_IDS
    assert tokenizer.eos_token == "<|im_end|>" and model.encoder.start_token_id is None
    assert tokenizer.decode(SMOLLM2_IDS) == TEXT
    assert model.loaded.weights.endswith(f"-tf{transformers.__version__}")


def test_gemma3_converts_to_its_own_tokenizer() -> None:
    model = backend("gemma3")
    tokenizer = model.tokenizer
    assert tokenizer.encode(TEXT) == GEMMA3_IDS
    assert (tokenizer.bos_token, tokenizer.eos_token) == ("<bos>", "<eos>")
    assert model.encoder.start_token_id == 2
    assert tokenizer.decode(GEMMA3_IDS[1:]) == TEXT
    assert model.loaded.weights.endswith(f"-tf{transformers.__version__}")


def test_a_transformers_that_reads_gguf_tokenizers_wrongly_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a transformers older than the measured floor, converting refuses before reading anything, and
    names the way out; the cache it would have filled stays empty."""
    monkeypatch.setenv("LONGREAD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(gguf_reader, "transformers_version", lambda: "5.2.0")
    with pytest.raises(ModelLoadError, match=r"transformers 5\.2\.0 reads GGUF tokenizers wrongly") as info:
        load_gguf(smollm2_gguf_path(), name="smollm2")
    assert "hf:FOLDER" in str(info.value) and "cannot read this GGUF file" not in str(info.value)
    assert not any((tmp_path / "cache" / "models").glob("smollm2-*/model.safetensors"))


def test_a_conversion_opens_each_gguf_once_and_reads_what_a_fresh_reader_reads() -> None:
    """Converting shares one reader per file (transformers would parse the metadata three times); the
    shared reader's fields are a fresh reader's, and leaving gives back gguf's own class."""
    import gguf

    path = smollm2_gguf_path()
    own = gguf.GGUFReader
    with gguf_reader.one_reader_per_file():
        first = gguf.GGUFReader(path)
        assert gguf.GGUFReader(str(path)) is first and gguf.GGUFReader(path, "r") is first
    assert gguf.GGUFReader is own and isinstance(first, own)
    fresh = own(path)
    assert list(first.fields) == list(fresh.fields) and len(first.tensors) == len(fresh.tensors) > 0
    tokens = "tokenizer.ggml.tokens"
    assert len(first.fields[tokens].data) == len(fresh.fields[tokens].data) == 49_152


def test_the_same_weights_under_another_name_have_one_fingerprint(tmp_path: Path) -> None:
    """A model's identity is its content: the shipped GGUF copied under another name is the same model
    (it was "another model" while the file's name was hashed), and a changed byte is another."""
    shipped = smollm2_gguf_path()
    renamed = tmp_path / "my-copy.gguf"
    renamed.write_bytes(shipped.read_bytes())
    assert _file_fingerprint([renamed]) == _file_fingerprint([shipped])
    changed = tmp_path / "changed.gguf"
    content = bytearray(shipped.read_bytes())
    content[-1] ^= 1
    changed.write_bytes(bytes(content))
    assert _file_fingerprint([changed]) != _file_fingerprint([shipped])
