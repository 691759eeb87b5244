"""What ``--model openai:…`` names: a server, a served model, a tokenizer, and how to talk to the server.

Two spellings:

- ``openai:BASE_URL#MODEL[?key=value&…]``, e.g.
  ``openai:http://127.0.0.1:8000/v1#smollm2?tokenizer=smollm2&concurrency=8``;
- ``openai:CONFIG.json``, a file with the same keys (``base_url`` and ``model`` required).

Keys: ``tokenizer`` (``smollm2``, ``gemma3``, ``hf:FOLDER`` or ``server``; default: the longread
model of the same name when the served name is one, else ``server``), ``api_key_env`` (the
environment variable holding the key, default ``OPENAI_API_KEY``), ``concurrency``, ``timeout``
(seconds per request), ``max_retries``, ``self_check`` (``true``/``false``) and ``max_length``
(default: the server's ``max_model_len``) and ``prompt_form`` (``auto``, ``ids`` or ``text``).
The key itself is never part of a spec or a config file: it is read from the environment only, so
it cannot end up in a run's config.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from longread.models.errors import ModelSpecError

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
LOCAL_TOKENIZERS = ("smollm2", "gemma3")
SERVER_TOKENIZER = "server"
_SECRET_KEYS = ("api_key", "key", "token", "authorization", "password")


class ServedConfig(BaseModel):
    """One served model and how longread talks to it (every field but the key, which stays in the env)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str
    """Up to and including ``/v1``, e.g. ``http://127.0.0.1:8000/v1``."""
    model: str
    """The served model name (vLLM's ``--served-model-name``); requests carry it as ``model``."""
    tokenizer: str | None = None
    api_key_env: str = DEFAULT_API_KEY_ENV
    concurrency: int = Field(default=4, ge=1, le=256)
    timeout: float = Field(default=120.0, gt=0)
    """Seconds a request may wait for the server before it counts as failed (and is retried)."""
    max_retries: int = Field(default=4, ge=0, le=20)
    self_check: bool = True
    prompt_form: Literal["auto", "ids", "text"] = "auto"
    """How prompts are sent: token ids (the lm-eval boundary kept exactly), text, or ``auto`` — ids
    unless the server refuses them at the self-check."""
    max_length: int | None = Field(default=None, ge=1)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(
                f"base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got {value!r}"
            )
        if parts.username or parts.password:
            raise ValueError("base_url must not hold credentials; put the key in an environment variable")
        return value.rstrip("/")

    @field_validator("tokenizer")
    @classmethod
    def _known_tokenizer(cls, value: str | None) -> str | None:
        if value is None or value in (*LOCAL_TOKENIZERS, SERVER_TOKENIZER) or value.startswith("hf:"):
            return value
        raise ValueError(f"tokenizer must be smollm2, gemma3, hf:FOLDER or server, got {value!r}")

    @property
    def tokenizer_name(self) -> str:
        """The tokenizer actually used: the one named, else the longread model the served name matches."""
        if self.tokenizer is not None:
            return self.tokenizer
        return self.model if self.model in LOCAL_TOKENIZERS else SERVER_TOKENIZER


def _refuse_secrets(keys: list[str], where: str) -> None:
    for key in keys:
        if key.lower() in _SECRET_KEYS:
            raise ModelSpecError(
                f"{where}: {key!r} is not accepted — a key in a spec or config file would end up in run "
                "configs; export it in an environment variable (OPENAI_API_KEY, or the one api_key_env names)"
            )


def _build(values: dict[str, Any], where: str) -> ServedConfig:
    _refuse_secrets(list(values), where)
    try:
        return ServedConfig.model_validate(values)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'config'}: {e['msg']}" for e in exc.errors())
        raise ModelSpecError(f"{where}: {problems}") from None


def parse_served_spec(rest: str) -> ServedConfig:
    """The part after ``openai:`` — ``BASE_URL#MODEL[?k=v&…]`` or the path of a JSON config file."""
    if not rest:
        raise ModelSpecError(
            "model spec 'openai:' needs a server: openai:http://127.0.0.1:8000/v1#MODEL or openai:CONFIG.json"
        )
    if "#" not in rest:
        path = Path(rest).expanduser()
        if path.suffix != ".json" and not path.is_file():
            raise ModelSpecError(
                f"model spec 'openai:{rest}': name the served model after '#', e.g. "
                "openai:http://127.0.0.1:8000/v1#smollm2, or give a JSON config file"
            )
        return load_served_config(path)
    base_url, _, tail = rest.partition("#")
    model, _, query = tail.partition("?")
    if not model:
        raise ModelSpecError(f"model spec 'openai:{rest}': give the served model name after '#'")
    pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=False)
    values: dict[str, Any] = {"base_url": base_url, "model": model}
    for key, value in pairs:
        values[key] = (
            {"true": True, "false": False}.get(value.lower(), value) if key == "self_check" else value
        )
    return _build(values, f"model spec 'openai:{rest.split('?')[0]}'")


def load_served_config(path: Path) -> ServedConfig:
    """A JSON config file with the :class:`ServedConfig` keys."""
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelSpecError(f"{path}: no such served-model config file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelSpecError(f"{path}: cannot read it as JSON ({exc}); fix the file") from None
    if not isinstance(values, dict):
        raise ModelSpecError(f"{path}: a served-model config is a JSON object with base_url and model")
    return _build(values, str(path))


def with_spec_options(spec: str, **options: str) -> str:
    """``spec`` with ``key=value`` options added to its query (``openai:URL#MODEL?…`` form only), e.g. the
    CLI's ``--no-self-check`` as ``with_spec_options(spec, self_check="false")``."""
    if not spec.startswith("openai:") or "#" not in spec:
        raise ModelSpecError(
            f"{spec!r}: options go into an openai:BASE_URL#MODEL spec only; put them in the config file"
        )
    query = "&".join(f"{key}={value}" for key, value in options.items())
    return spec + ("&" if "?" in spec.partition("#")[2] else "?") + query if query else spec
