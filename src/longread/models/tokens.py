"""The token boundary between a context and its continuations, and how a context is cut to a budget.

The boundary is exactly lm-evaluation-harness's. The cut is not: a context is
cut from the left by :func:`keep_last_text_tokens`, which removes text and
never the start-of-sequence token a tokenizer puts in front (Gemma, Llama,
Mistral add a BOS; lm-eval's ``[-(max_length + 1):]`` slices it away). Where
the tokenizer adds one, the BOS stays at position 0 and every budget —
``max_context_tokens``, the model's window, rolling windows, generation
prompts — counts the text tokens after it. Token counts reported for a context
(``context_tokens_original`` / ``_kept``) are text tokens: the BOS, or the
prefix token that stands for an empty context, is never counted.

Kept separate from any model so the rules can be pinned by tests and shared by
every backend that sees token ids.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from longread.models.errors import BadRequestError, ContextTooLongError
from longread.models.requests import LoglikelihoodRequest
from longread.models.requests.control import ControlRecord, apply_control


class TokenEncoder(Protocol):
    """The two encodings lm-eval's HFLM uses, its prefix token, and the start token no cut removes."""

    @property
    def prefix_token_id(self) -> int:
        """BOS if the tokenizer has one, else EOS: what an empty context becomes."""
        ...

    @property
    def start_token_id(self) -> int | None:
        """The BOS that ``encode`` puts in front of every text by itself, else None (GPT-2, SmolLM2)."""
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


def start_length(ids: Sequence[int], start_token_id: int | None) -> int:
    """1 if ``ids`` opens with the start token (which no cut removes), else 0."""
    return int(start_token_id is not None and len(ids) > 0 and ids[0] == start_token_id)


def keep_last_text_tokens(ids: Sequence[int], keep: int, start_token_id: int | None) -> list[int]:
    """``ids`` cut from the left to its last ``keep`` text tokens; a start token at position 0 stays.

    The one left-cut every task uses (log-likelihood contexts, the window,
    rolling windows, generation prompts): it removes text, never the BOS.
    """
    if keep < 0:
        raise ValueError(f"cannot keep {keep} tokens")
    head = start_length(ids, start_token_id)
    text = list(ids[head:])
    return list(ids[:head]) + (text[len(text) - keep :] if keep < len(text) else text)


def text_token_count(ids: Sequence[int], start_token_id: int | None) -> int:
    """Tokens of ``ids`` that are text (the start token is not)."""
    return len(ids) - start_length(ids, start_token_id)


@dataclass(frozen=True, slots=True)
class EncodedGroup:
    """The exact token sequences one log-likelihood request is scored with (shared and naive alike)."""

    context: tuple[int, ...]
    """What the model reads before the continuations: start token (if any) + the kept text."""
    continuations: tuple[tuple[int, ...], ...]
    context_tokens_original: int
    """Text tokens of the context before any cut (no start or prefix token)."""
    continuation_tokens_original: tuple[int, ...]
    context_start_tokens: int = 0
    """Tokens in front of the context's text that no cut removes: the BOS, or the prefix token of an
    empty context (0 or 1)."""
    control: ControlRecord | None = None
    """What the request's context control did to ``context`` (None: no control)."""
    question_tokens: int = 0
    """Tokens at the end of ``context`` that are the request's question (never perturbed, never pressed),
    found on the uncut ids: every cut removes tokens from the front, so the count holds after it."""

    @property
    def read_ids(self) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
        """The context as read without its start token, and the continuations as scored."""
        return self.context[self.context_start_tokens :], self.continuations

    @property
    def context_tokens_kept(self) -> int:
        """Text tokens of the context the model reads."""
        return len(self.context) - self.context_start_tokens


def question_tokens(encoder: TokenEncoder, request: LoglikelihoodRequest, whole: Sequence[int]) -> int:
    """Tokens at the end of the request's context that are its question (``question_chars``): those
    after the longest run of tokens the context shares with its document alone (a token spanning the
    seam counts as question). ``whole``: the context's text tokens, already encoded."""
    if not request.question_chars:
        return 0
    document = encoder.encode_plain(request.context[: len(request.context) - request.question_chars])
    shared = 0
    for a, b in zip(whole, document, strict=False):
        if a != b:
            break
        shared += 1
    return len(whole) - shared


def encode_request(encoder: TokenEncoder, request: LoglikelihoodRequest, max_length: int) -> EncodedGroup:
    """Tokenise a request and apply its truncation policy.

    The context is the same for every continuation (it is read once), so the
    window check uses the longest kept continuation: the model sees
    ``context + continuation[:-1]``, which must be at most ``max_length`` tokens.
    Both cuts (``max_context_tokens``, then the window) keep the start token and
    count text tokens; ``max_context_tokens`` is a number of text tokens.
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
    # An empty context is the prefix token alone: a stand-in, kept like a start token and not counted as text.
    start_token = encoder.start_token_id if stripped else encoder.prefix_token_id
    head = start_length(context_ids, start_token)
    text_original = len(context_ids) - head
    context = context_ids
    if request.max_context_tokens:
        context = keep_last_text_tokens(context, request.max_context_tokens, start_token)
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
        context = keep_last_text_tokens(context, room - head, start_token)
    record = None
    # on the uncut ids: a cut or controlled context no longer starts as the document did
    question = min(question_tokens(encoder, request, context_ids[head:]), len(context) - head)
    if request.control is not None:  # after every cut: exactly what the model would read
        context, record = apply_control(
            context,
            request.control,
            start_tokens=head,
            question_tokens=question,
            encode_plain=encoder.encode_plain,
        )
        if not context:  # `none` with K = 0 on a model without a start token: read the prefix token alone
            context, head, question = [encoder.prefix_token_id], 1, 0
    return EncodedGroup(
        context=tuple(context),
        continuations=continuations,
        context_tokens_original=text_original,
        continuation_tokens_original=originals,
        context_start_tokens=head,
        control=record,
        question_tokens=question,
    )


def rolling_windows(
    tokens: Sequence[int], prefix_token_id: int, max_length: int, start_token_id: int | None = None
) -> Iterator[tuple[list[int], list[int]]]:
    """Disjoint (context, continuation) windows that score every text token once — lm-eval's
    ``get_rolling_token_windows(..., context_len=1)`` followed by ``make_disjoint_window``.

    ``tokens`` are text tokens (no BOS). With a ``start_token_id`` (a model that
    expects its BOS), every window after the first starts with it too, so the
    text in such a window is ``max_length - 1`` tokens; without one the windows
    are exactly lm-eval's.
    """
    token_list = list(tokens)
    if not token_list:
        return
    head = [] if start_token_id is None else [start_token_id]
    text_length = max_length - len(head)  # text positions in a window after the first
    if text_length < 1:
        raise ValueError(f"a window of {max_length} token(s) holds no text beside the start token")
    first = min(max_length, len(token_list))
    yield [prefix_token_id], token_list[:first]
    predicted = first
    while predicted < len(token_list):
        window = min(len(token_list) - predicted, text_length)
        end = predicted + window
        # lm-eval's window input is tokens[end - max_length - 1 : end - 1]; made disjoint, the context is
        # what precedes the predicted span: one token for a full window, more for the last, shorter one.
        yield head + token_list[end - text_length - 1 : end - window], token_list[end - window : end]
        predicted += window
