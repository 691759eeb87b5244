"""The tokenizer a served model is scored with: a local one (the lm-eval boundary needs token ids) or
the server's own ``/tokenize`` and ``/detokenize`` (vLLM's endpoints) when no local one is named.

Both answer :class:`~longread.models.tokens.TokenEncoder`, so requests are cut and split exactly as
the local backend cuts and splits them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from longread.models.errors import ModelLoadError
from longread.models.served.client import MalformedResponse, ServedClient
from longread.models.served.spec import SERVER_TOKENIZER
from longread.models.tokens import TokenEncoder


class ServedTokenizer(TokenEncoder, Protocol):
    description: str

    def decode(self, ids: list[int]) -> str: ...


class LocalTokenizer:
    """A Hugging Face tokenizer behind lm-eval's ``tok_encode`` rules (the local backend's encoder)."""

    def __init__(self, tokenizer: Any, description: str) -> None:
        from longread.models.hf.backend import HFTokenEncoder

        self._encoder = HFTokenEncoder(tokenizer)
        self._tokenizer = tokenizer
        self.description = description

    @property
    def prefix_token_id(self) -> int:
        return self._encoder.prefix_token_id

    @property
    def start_token_id(self) -> int | None:
        return self._encoder.start_token_id

    def encode(self, text: str) -> list[int]:
        return self._encoder.encode(text)

    def encode_plain(self, text: str) -> list[int]:
        return self._encoder.encode_plain(text)

    def decode(self, ids: list[int]) -> str:
        return str(self._tokenizer.decode(ids))


def _token_list(body: Any) -> list[int]:
    tokens = body.get("tokens") if isinstance(body, dict) else None
    if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
        raise MalformedResponse("/tokenize answered without a list of token ids")
    return tokens


def _prompt_text(body: Any) -> str:
    text = body.get("prompt") if isinstance(body, dict) else None
    if not isinstance(text, str):
        raise MalformedResponse("/detokenize answered without a prompt text")
    return text


class ServerTokenizer:
    """The served model's tokenizer, asked over HTTP (vLLM's ``/tokenize``, ``/detokenize``)."""

    description = SERVER_TOKENIZER

    def __init__(self, client: ServedClient, model: str) -> None:
        self._client = client
        self._model = model
        with_start, plain = self._tokenize("a", True), self._tokenize("a", False)
        self._start = with_start[0] if len(with_start) > len(plain) and with_start[1:] == plain else None
        end = self._tokenize("", True)
        self._prefix = self._start if self._start is not None else (end[0] if end else None)

    def _tokenize(self, text: str, specials: bool) -> list[int]:
        payload = {"model": self._model, "prompt": text, "add_special_tokens": specials}
        return self._client.post("/tokenize", payload, _token_list, root=True)

    @property
    def prefix_token_id(self) -> int:
        if self._prefix is None:
            raise ModelLoadError(
                "tokenizer=server",
                "the server's tokenizer adds no start token, so an empty context has no prefix token",
                "name a local tokenizer (tokenizer=hf:FOLDER) that knows the model's BOS/EOS",
            )
        return self._prefix

    @property
    def start_token_id(self) -> int | None:
        return self._start

    def encode(self, text: str) -> list[int]:
        return list(self._tokenize(text, True))

    def encode_plain(self, text: str) -> list[int]:
        return list(self._tokenize(text, False))

    def decode(self, ids: list[int]) -> str:
        payload = {"model": self._model, "tokens": list(ids)}
        return self._client.post("/detokenize", payload, _prompt_text, root=True)


def load_tokenizer(name: str, client: ServedClient, model: str) -> ServedTokenizer:
    """``smollm2``, ``gemma3``, ``hf:FOLDER`` (a local tokenizer) or ``server``."""
    from longread.models.hf import loading

    if name == SERVER_TOKENIZER:
        return ServerTokenizer(client, model)
    if name == "smollm2":
        return LocalTokenizer(loading.smollm2_tokenizer(), "smollm2")
    if name == "gemma3":
        return LocalTokenizer(loading.load_gemma3().tokenizer, "gemma3")
    folder = Path(name.removeprefix("hf:")).expanduser()
    try:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    except Exception as exc:
        raise ModelLoadError(
            folder,
            f"cannot load a tokenizer from it ({type(exc).__name__})",
            "give a folder with tokenizer files",
        ) from exc
    return LocalTokenizer(tokenizer, name)
