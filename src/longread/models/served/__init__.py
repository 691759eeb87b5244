"""Served models: ``--model openai:BASE_URL#MODEL`` or ``openai:CONFIG.json`` (see :mod:`.spec`).

:func:`load_served_backend` connects: it asks the server which models it serves (and their window),
loads the tokenizer, runs the self-check (:mod:`.self_check`) and returns a :class:`ServedBackend`.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from longread.models.errors import ModelLoadError
from longread.models.served.backend import ServedBackend
from longread.models.served.client import MalformedResponse, RetryPolicy, ServedClient, ServedRequestError
from longread.models.served.scoring import EchoSettings
from longread.models.served.self_check import SelfCheck, run_self_check
from longread.models.served.spec import ServedConfig, parse_served_spec
from longread.models.served.tokenizer import load_tokenizer

__all__ = ["ServedBackend", "ServedConfig", "ServedRequestError", "load_served_backend", "parse_served_spec"]

logger = logging.getLogger(__name__)


def _served_models(body: Any) -> dict[str, int | None]:
    """``/v1/models`` → {served name: max_model_len (vLLM) or None}."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise MalformedResponse("/v1/models answered without a data list")
    models: dict[str, int | None] = {}
    for entry in data:
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            window = entry.get("max_model_len")
            models[entry["id"]] = window if isinstance(window, int) and window > 0 else None
    return models


def _server_version(client: ServedClient) -> str:
    try:
        version = client.get(
            "/version", lambda body: str(body.get("version", "")) if isinstance(body, dict) else "", root=True
        )
    except ServedRequestError:
        return ""
    return f"vllm {version}" if version else ""


def load_served_backend(spec: str, rest: str, *, max_length: int | None = None) -> ServedBackend:
    """Connect to the server a spec names; ``max_length`` (``--max-length``) overrides the config's."""
    config = parse_served_spec(rest)
    if max_length is not None:
        config = config.model_copy(update={"max_length": max_length})
    client = ServedClient(
        config.base_url,
        api_key=os.environ.get(config.api_key_env) or None,
        timeout=config.timeout,
        retry=RetryPolicy(max_retries=config.max_retries),
    )
    models = client.get("/models", _served_models)
    if config.model not in models:
        raise ModelLoadError(
            f"{config.base_url}#{config.model}",
            f"the server serves {', '.join(sorted(models)) or 'no model'}, not {config.model!r}",
            "name one of those after '#' (vLLM: the --served-model-name)",
        )
    window = models[config.model] or config.max_length
    if window is None:
        raise ModelLoadError(
            f"{config.base_url}#{config.model}",
            "the server does not say how long the model's window is",
            "give max_length=N in the spec or config",
        )
    tokenizer = load_tokenizer(config.tokenizer_name, client, config.model)
    if config.self_check:
        check = run_self_check(client, config.model, tokenizer, config.prompt_form)
        if check.passed:
            logger.info(
                "longread: self-check of %s#%s passed (%s)", config.base_url, config.model, check.reason
            )
        else:
            logger.warning(
                "longread: %s#%s will not be used for log-likelihood (generation only): %s",
                config.base_url, config.model, check.reason,
            )  # fmt: skip
    else:
        form = "text" if config.prompt_form == "text" else "ids"
        check = SelfCheck(True, "not run (self_check=false)", EchoSettings(form, 0), "unchecked")  # type: ignore[arg-type]
    return ServedBackend(
        config,
        spec=spec,
        client=client,
        tokenizer=tokenizer,
        server_max_length=window,
        check=check,
        server=_server_version(client),
    )
