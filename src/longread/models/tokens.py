"""The token boundary between a context and its continuations, exactly as lm-evaluation-harness draws it.

Kept separate from any model so the rule can be pinned by tests and shared by
every backend that sees token ids.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from longread.models.errors import BadRequestError, ContextTooLongError
from longread.models.requests import LoglikelihoodRequest


class TokenEncoder(Protocol):
    """The two encodings lm-eval's HFLM uses, and its prefix token."""

    @property
    def prefix_token_id(self) -> int:
        """BOS if the tokenizer has one, else EOS: what an empty context becomes."""
        ...

    def encode(self, text: str) -> list[int]:
        """``tok_encode``: the tokenizer's own special-token default (a BOS only if it adds one itself)."""
        ...

    def encode_plain(self, text: str) -> list[int]:
        """Without any special tokens."""
        ...


def move_trailing_whitespace(context: str, continuation: str) -> tuple[str, str]:
    """lm-eval's rule: trailing whitespace of the context belongs to the continuation."""
    stripped = context.rstrip()
    n_spaces = len(context) - len(stripped)
    if n_spaces == 0:
        return context, continuation
    return stripped, context[-n_spaces:] + continuation


def encode_pair(
    encoder: TokenEncoder, context: str, continuation: str, context_ids: list[int] | None = None
) -> tuple[list[int], list[int]]:
    """(context tokens, continuation tokens) as lm-eval's ``HFLM.loglikelihood`` makes them.

    Continuation tokens are ``tok(context + continuation)[len(tok(context)):]``
    after the trailing whitespace of the context has moved to the continuation,
    so a merge across the boundary is attributed to the continuation. A context
    without tokens becomes the model's prefix token (BOS, else EOS).
    ``context_ids`` may pass ``tok(context.rstrip())`` when it is already known.
    """
    context, continuation = move_trailing_whitespace(context, continuation)
    if context == "":
        continuation_ids = encoder.encode_plain(continuation)
        if continuation_ids and continuation_ids[0] == encoder.prefix_token_id:
            return continuation_ids[:1], continuation_ids[1:]
        return [encoder.prefix_token_id], continuation_ids
    if context_ids is None:
        context_ids = encoder.encode(context)
    whole = encoder.encode(context + continuation)
    return context_ids, whole[len(context_ids) :]


@dataclass(frozen=True, slots=True)
class EncodedGroup:
    """The exact token sequences one log-likelihood request is scored with (shared and naive alike)."""

    context: tuple[int, ...]
    continuations: tuple[tuple[int, ...], ...]
    context_tokens_original: int
    continuation_tokens_original: tuple[int, ...]


def encode_request(encoder: TokenEncoder, request: LoglikelihoodRequest, max_length: int) -> EncodedGroup:
    """Tokenise a request and apply its truncation policy.

    The context is the same for every continuation (it is read once), so the
    window check uses the longest kept continuation: the model sees
    ``context + continuation[:-1]``, which must be at most ``max_length`` tokens.
    """
    stripped = request.context.rstrip()
    shared_ids = (
        encoder.encode(stripped) if stripped else None
    )  # tokenise a long context once, not per continuation
    pairs = [encode_pair(encoder, request.context, c, shared_ids) for c in request.continuations]
    context_ids = pairs[0][0]
    originals = tuple(len(p[1]) for p in pairs)
    for text, n in zip(request.continuations, originals, strict=True):
        if n == 0:
            raise BadRequestError(
                f"continuation {text!r} has no tokens of its own after the lm-eval boundary rule "
                "(it merged into the context); give a continuation with visible text"
            )
    cut = request.max_continuation_tokens
    continuations = tuple(tuple(p[1][:cut] if cut else p[1]) for p in pairs)
    context = context_ids[-request.max_context_tokens :] if request.max_context_tokens else context_ids
    longest = max(len(c) for c in continuations)
    room = max_length + 1 - longest  # context tokens that fit beside the longest continuation
    if len(context) > room:
        if not request.truncate or room < 1:
            needed = len(context) + longest - 1
            reason = (
                f"context ({len(context)} tokens) + longest continuation ({longest} tokens) needs {needed} "
                f"positions but the model's window is {max_length}"
            )
            if room < 1:
                raise ContextTooLongError(
                    f"{reason}; even without context it does not fit — set max_continuation_tokens"
                )
            raise ContextTooLongError(
                f"{reason}; enable truncation (truncate=True), set max_context_tokens or shorten the context"
            )
        context = context[len(context) - room :]
    return EncodedGroup(
        context=tuple(context),
        continuations=continuations,
        context_tokens_original=len(context_ids),
        continuation_tokens_original=originals,
    )


def rolling_windows(
    tokens: Sequence[int], prefix_token_id: int, max_length: int
) -> Iterator[tuple[list[int], list[int]]]:
    """Disjoint (context, continuation) windows that score every token once — lm-eval's
    ``get_rolling_token_windows(..., context_len=1)`` followed by ``make_disjoint_window``."""
    token_list = list(tokens)
    if not token_list:
        return
    first = min(max_length, len(token_list))
    yield [prefix_token_id], token_list[:first]
    predicted = first
    while predicted < len(token_list):
        window = min(len(token_list) - predicted, max_length)
        end = predicted + window
        # lm-eval's window input is tokens[end - max_length - 1 : end - 1]; made disjoint, the context is
        # what precedes the predicted span: one token for a full window, more for the last, shorter one.
        yield token_list[end - max_length - 1 : end - window], token_list[end - window : end]
        predicted += window
