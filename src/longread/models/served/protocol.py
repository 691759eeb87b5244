"""The OpenAI-compatible request and answer shapes longread uses, and how an answer is read.

Prompt log-probs come from ``/v1/completions`` with ``echo: true, logprobs: 1, max_tokens: 0``
(``max_tokens: 1`` for a server that refuses 0; the generated token is then ignored). vLLM answers
such a request with two copies of the same numbers: the OpenAI ``logprobs`` block (token strings,
``top_logprobs``) and its own ``prompt_logprobs`` (keyed by token id, with each token's ``rank``).
Where ``prompt_logprobs`` is there it is read — the token ids can be checked against the ids sent
and ``rank == 1`` is the greedy flag; otherwise the ``logprobs`` block is read, a token counting as
greedy when its log-prob is the highest among ``top_logprobs``. Position 0 has no log-prob (nothing
precedes it). Anything missing or of the wrong length raises :class:`MalformedResponse`, so it is
retried and never scored.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from longread.models.requests import STOPPED_BY_EOS, STOPPED_BY_MAX_TOKENS, STOPPED_BY_STOP
from longread.models.served.client import MalformedResponse

LogprobRoute = Literal["prompt_logprobs", "echo"]


@dataclass(frozen=True, slots=True)
class PromptScores:
    """Log-prob and greedy flag of every prompt position after the first, from one choice."""

    logprobs: tuple[float, ...]
    greedy: tuple[bool, ...]
    route: LogprobRoute


def echo_payload(
    model: str, prompts: Sequence[Sequence[int]] | Sequence[str], max_tokens: int
) -> dict[str, Any]:
    """One ``/v1/completions`` request that scores every prompt (each a token-id list, or a text)."""
    return {
        "model": model,
        "prompt": [list(p) if not isinstance(p, str) else p for p in prompts],
        "echo": True,
        "logprobs": 1,
        "max_tokens": max_tokens,
        "temperature": 0.0,
    }


def _dict(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MalformedResponse(f"{what} is not an object")
    return value


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise MalformedResponse(f"{what} is missing or not a list")
    return value


def _finite(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise MalformedResponse(f"{what} is {value!r}, not a finite log-prob")
    return float(value)


def choices_in_order(body: Any, expected: int) -> list[dict[str, Any]]:
    """The answer's ``choices``, one per prompt, ordered by ``index``."""
    choices = [_dict(c, "a choice") for c in _list(_dict(body, "the answer").get("choices"), "choices")]
    if len(choices) != expected:
        raise MalformedResponse(f"{len(choices)} choices for {expected} prompt(s)")
    try:
        ordered = sorted(choices, key=lambda c: int(c.get("index", 0)))
    except (TypeError, ValueError):
        raise MalformedResponse("a choice has no integer index") from None
    if [int(c.get("index", 0)) for c in ordered] != list(range(expected)):
        raise MalformedResponse("choice indexes are not 0 … n-1")
    return ordered


def _from_prompt_logprobs(entries: list[Any], ids: Sequence[int]) -> PromptScores:
    logprobs: list[float] = []
    greedy: list[bool] = []
    for position in range(1, len(ids)):
        entry = _dict(entries[position], f"prompt_logprobs[{position}]")
        token = entry.get(str(ids[position]))
        if not isinstance(token, dict):
            raise MalformedResponse(
                f"prompt_logprobs[{position}] has no entry for the token sent ({ids[position]}): the server "
                "read other tokens than the ids sent"
            )
        logprobs.append(_finite(token.get("logprob"), f"prompt_logprobs[{position}].logprob"))
        greedy.append(token.get("rank") == 1)
    return PromptScores(tuple(logprobs), tuple(greedy), "prompt_logprobs")


def _from_echo(block: dict[str, Any], n_positions: int) -> PromptScores:
    values = _list(block.get("token_logprobs"), "logprobs.token_logprobs")
    tops = _list(block.get("top_logprobs"), "logprobs.top_logprobs")
    if len(values) < n_positions or len(tops) < n_positions:
        raise MalformedResponse(f"{len(values)} echoed log-probs for a prompt of {n_positions} tokens")
    logprobs: list[float] = []
    greedy: list[bool] = []
    for position in range(1, n_positions):
        value = _finite(values[position], f"token_logprobs[{position}]")
        top = _dict(tops[position], f"top_logprobs[{position}]")
        best = max((_finite(v, f"top_logprobs[{position}]") for v in top.values()), default=value)
        logprobs.append(value)
        greedy.append(value >= best)
    return PromptScores(tuple(logprobs), tuple(greedy), "echo")


def prompt_scores(choice: dict[str, Any], ids: Sequence[int] | None, n_positions: int) -> PromptScores:
    """Scores of one echoed prompt: from vLLM's ``prompt_logprobs`` when present (and the ids are
    known), else from the ``logprobs`` block. ``n_positions`` is the prompt's length in tokens."""
    entries = choice.get("prompt_logprobs")
    if ids is not None and isinstance(entries, list):
        if len(entries) != len(ids):
            raise MalformedResponse(
                f"prompt_logprobs has {len(entries)} positions for {len(ids)} token ids sent (did the server "
                "add a start token?)"
            )
        return _from_prompt_logprobs(entries, ids)
    block = choice.get("logprobs")
    if not isinstance(block, dict):
        raise MalformedResponse("the choice has no logprobs (does the server support echo with logprobs?)")
    if ids is not None and len(_list(block.get("token_logprobs"), "logprobs.token_logprobs")) < len(ids):
        raise MalformedResponse("fewer echoed log-probs than token ids sent")
    return _from_echo(block, n_positions)


def echoed_offsets(choice: dict[str, Any]) -> list[int]:
    """Character offsets of the echoed prompt tokens (for text prompts)."""
    block = _dict(choice.get("logprobs"), "logprobs")
    return [int(v) for v in _list(block.get("text_offset"), "logprobs.text_offset")]


# ------------------------------------------------------------ generation


@dataclass(frozen=True, slots=True)
class Generated:
    text: str
    n_prompt_tokens: int
    n_generated_tokens: int
    stopped_by: str


def generation_payload(
    model: str,
    prompt: Sequence[int] | str | list[dict[str, str]],
    *,
    max_tokens: int,
    stop: Sequence[str],
    temperature: float,
    seed: int,
) -> dict[str, Any]:
    """A ``/v1/completions`` request (a token-id list or a text) or ``/v1/chat/completions`` (messages)."""
    payload: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "seed": seed,
    }
    if stop:
        payload["stop"] = list(stop)
    if isinstance(prompt, list) and prompt and isinstance(prompt[0], dict):
        payload["messages"] = prompt
    else:
        payload["prompt"] = prompt if isinstance(prompt, str) else list(prompt)
    return payload


def parse_generation(body: Any, *, chat: bool, stop: Sequence[str]) -> Generated:
    """Text, token counts (``usage``) and why it stopped, from a completion or chat completion.

    ``finish_reason`` ``length`` → ``max_tokens``; ``stop`` with a stop string as ``stop_reason`` (vLLM)
    → ``stop``; ``stop`` otherwise → ``eos``, whose token the server counts among the completion
    tokens and the local backend does not, so it is taken off. A server that names no ``stop_reason``
    is judged by whether a stop string was asked for and the text would have run into one.
    """
    (choice,) = choices_in_order(body, 1)
    if chat:
        message = _dict(choice.get("message"), "message")
        text = message.get("content")
    else:
        text = choice.get("text")
    if not isinstance(text, str):
        raise MalformedResponse("the choice has no text")
    usage = _dict(_dict(body, "the answer").get("usage"), "usage")
    prompt_tokens, completion_tokens = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not isinstance(prompt_tokens, int) or not isinstance(completion_tokens, int):
        raise MalformedResponse("usage has no prompt_tokens / completion_tokens counts")
    reason = choice.get("finish_reason")
    if reason == "length":
        stopped_by = STOPPED_BY_MAX_TOKENS
    elif reason == "stop":
        stop_reason = choice.get("stop_reason")
        by_string = isinstance(stop_reason, str) if "stop_reason" in choice else bool(stop)
        stopped_by = STOPPED_BY_STOP if by_string else STOPPED_BY_EOS
    else:
        raise MalformedResponse(f"finish_reason {reason!r} is neither stop nor length")
    generated = completion_tokens - (1 if stopped_by == STOPPED_BY_EOS and completion_tokens > 0 else 0)
    return Generated(text, prompt_tokens, generated, stopped_by)


def greedy_ids_payload(model: str, prompt: Sequence[int], max_tokens: int) -> dict[str, Any]:
    """A ``/v1/completions`` request for exactly ``max_tokens`` greedy tokens after ``prompt`` (ids),
    asking for the generated token ids (vLLM: ``return_token_ids``, else the logprobs block as ids)."""
    return {
        "model": model,
        "prompt": list(prompt),
        "max_tokens": max_tokens,
        "temperature": 0.0,
        "seed": 0,
        "ignore_eos": True,
        "return_token_ids": True,
        "logprobs": 0,
        "return_tokens_as_token_ids": True,
    }


def parse_token_ids(body: Any) -> list[int]:
    """The generated token ids of a completion (``token_ids``, or ``token_id:N`` logprob tokens)."""
    (choice,) = choices_in_order(body, 1)
    ids = choice.get("token_ids")
    if isinstance(ids, list) and all(isinstance(i, int) for i in ids):
        return [int(i) for i in ids]
    logprobs = choice.get("logprobs")
    tokens = logprobs.get("tokens") if isinstance(logprobs, dict) else None
    if isinstance(tokens, list) and all(isinstance(t, str) and t.startswith("token_id:") for t in tokens):
        return [int(t.split(":", 1)[1]) for t in tokens]
    raise MalformedResponse(
        "the completion carries no generated token ids (neither token_ids nor token_id:N logprob tokens): "
        "the server does not say which tokens it generated (vLLM does)"
    )
