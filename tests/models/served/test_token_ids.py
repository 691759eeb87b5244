"""Generated token ids read from a completion: vLLM's ``token_ids``, the ``token_id:N`` logprob tokens, or a
clear refusal when a server says neither (extraction cannot compare tokens it is not given)."""

from __future__ import annotations

import pytest

from longread.models.served.client import MalformedResponse
from longread.models.served.protocol import greedy_ids_payload, parse_token_ids


def _body(choice: dict[str, object]) -> dict[str, object]:
    return {"choices": [{"index": 0, **choice}]}


def test_ids_come_from_token_ids_or_the_logprob_tokens() -> None:
    assert parse_token_ids(_body({"text": "ab", "token_ids": [5, 7]})) == [5, 7]
    tokens = {"tokens": ["token_id:11", "token_id:3"], "token_logprobs": [-0.1, -0.2]}
    assert parse_token_ids(_body({"text": "ab", "logprobs": tokens})) == [11, 3]


def test_a_server_that_sends_no_ids_is_named_not_guessed() -> None:
    with pytest.raises(MalformedResponse, match="no generated token ids"):
        parse_token_ids(_body({"text": "ab", "logprobs": {"tokens": ["a", "b"]}}))
    with pytest.raises(MalformedResponse):
        parse_token_ids({"choices": []})


def test_the_request_asks_for_exactly_the_tokens_greedily() -> None:
    payload = greedy_ids_payload("m", [1, 2, 3], 50)
    assert payload["prompt"] == [1, 2, 3] and payload["max_tokens"] == 50
    assert payload["temperature"] == 0.0 and payload["ignore_eos"] is True and payload["return_token_ids"]
