"""Read a book once and answer questions at their reading positions (a Hugging Face causal LM).

A *session* holds the key/value cache of the reading so far: the start token
(for a model whose tokenizer adds one) followed by the held text tokens of the
pieces read. Moving forward appends the next pieces' tokens to the cache
(prefilled in chunks, no vocabulary logits). A question *forks* the cache: the
fork's layers point at the same key/value tensors, and since a cache layer only
ever replaces its tensors (``torch.cat`` makes new ones) the prompt and options
fed to the fork never reach the reading, which goes on as if the question had
not been asked. Options are scored on the fork with the shared-prefix engine
(:func:`~longread.models.hf.shared_prefix.score_on_prefix`: packed into one row,
reading the prefix through read-only layers).

When the reading outgrows the window the :class:`~longread.models.requests.ReadingPolicy`
rule gives the new window start; the cache is then rebuilt from scratch over the
held tokens (positions restart at 0, the start token stays at 0), and the
tokens read again are counted. ``mode="reread"`` builds the same held tokens
from scratch for every question: the baseline that reads the book once per
question. Both modes read exactly the same token sequence, so they give the
same scores up to float rounding of the chunking.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase
from transformers.cache_utils import DynamicCache

from longread.models.errors import BadRequestError, ContextTooLongError
from longread.models.hf.batch_generate import Decoding, decode_on_cache
from longread.models.hf.cache_argument import with_cache
from longread.models.hf.shared_prefix import DEFAULT_TOKEN_BUDGET, PrefixState, score_on_prefix
from longread.models.requests import (
    FALLBACK_QUESTION_ROOM,
    STOPPED_BY_EOS,
    AskedQuestion,
    ContinuationScore,
    Progress,
    ReadAlongRequest,
    ReadAlongResult,
    Reading,
    window_start,
)
from longread.models.tokens import TokenEncoder, move_trailing_whitespace

ReadAlongMode = Literal["session", "reread"]
READ_ALONG_MODES: tuple[ReadAlongMode, ...] = ("session", "reread")


def fork_cache(cache: DynamicCache) -> DynamicCache:
    """A cache that shares ``cache``'s key/value tensors but whose updates never reach ``cache``.

    Each layer object is copied (its counters are its own) while its tensors are
    shared; a layer's ``update`` assigns a new concatenated tensor to the copy.
    """
    fork = copy.copy(cache)
    fork.layers = [copy.copy(layer) for layer in cache.layers]
    return fork


class _ForkedPrefix(PrefixState):
    """A prefix whose private copies (long options, special layers) are forks, not deep copies."""

    def growable_copy(self) -> DynamicCache:
        assert isinstance(self.cache, DynamicCache)
        return fork_cache(self.cache)


@dataclass
class _Tokenised:
    """A reading's pieces as text tokens, with the running totals after each piece."""

    reading: Reading
    tokens: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    """``ends[k]``: text tokens after reading k pieces (``ends[0] = 0``)."""

    def upto(self, encoder: TokenEncoder, pieces: int) -> int:
        if not self.ends:
            self.ends.append(0)
        while len(self.ends) <= pieces:
            self.tokens.extend(encoder.encode_plain(self.reading.pieces[len(self.ends) - 1]))
            self.ends.append(len(self.tokens))
        return self.ends[pieces]


@dataclass
class _Session:
    """The reading state of one reading under one (window, stride)."""

    text: _Tokenised
    window: int
    stride: int
    scenes_read: int = 0
    n_tokens: int = 0
    start: int = 0
    cache: DynamicCache | None = None
    length: int = 0
    """Tokens in the cache (start token included)."""
    rereads: int = 0
    reread_tokens: int = 0


@dataclass(frozen=True)
class _Question:
    prompt: list[int]
    options: list[list[int]]
    options_original: list[int]


class ReadAlongEngine:
    """Answers :class:`ReadAlongRequest` s; keeps one session while requests move forward in one reading."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        encoder: TokenEncoder,
        max_length: int,
        *,
        mode: ReadAlongMode = "session",
        prefill_chunk: int = 512,
        batch_size: int = 8,
    ) -> None:
        if mode not in READ_ALONG_MODES:
            raise ValueError(f"read-along mode must be one of {READ_ALONG_MODES}, got {mode!r}")
        self.model = model
        self.tokenizer = tokenizer
        self.encoder = encoder
        self.max_length = max_length
        self.mode: ReadAlongMode = mode
        self.prefill_chunk = prefill_chunk
        self.batch_size = batch_size
        self._session: _Session | None = None
        self._text: _Tokenised | None = None
        self._rooms: dict[str, int] = {}

    # ------------------------------------------------------------ tokens

    @property
    def _head(self) -> list[int]:
        start = self.encoder.start_token_id
        return [] if start is None else [start]

    def _tokenised(self, reading: Reading) -> _Tokenised:
        if self._text is None or self._text.reading != reading:
            self._text = _Tokenised(reading)
        return self._text

    def _question(self, request: ReadAlongRequest) -> _Question:
        return self._tokenise_question(request.prompt, request.options)

    def _tokenise_question(self, prompt_text: str, option_texts: Sequence[str]) -> _Question:
        """Prompt and option tokens with lm-eval's boundary rule, tokenised apart from the reading."""
        stripped = prompt_text.rstrip()
        prompt = self.encoder.encode_plain(stripped)
        if not prompt:
            raise BadRequestError(f"the prompt {prompt_text!r} has no tokens; give a visible question text")
        options = []
        for option in option_texts:
            context, continuation = move_trailing_whitespace(prompt_text, option)
            ids = self.encoder.encode_plain(context + continuation)[len(prompt) :]
            if not ids:
                raise BadRequestError(
                    f"option {option!r} has no tokens of its own after the lm-eval boundary rule"
                )
            options.append(ids)
        return _Question(prompt, options, [len(o) for o in options])

    def _needs(self, question: _Question, generate_tokens: int) -> int:
        """Positions a question takes after the reading: its prompt, then its longest option or answer."""
        longest = max((len(o) for o in question.options), default=1)
        return len(question.prompt) + max(longest - 1, generate_tokens)

    def question_room(self, reading: Reading) -> int | None:
        """The start token and the longest question the reading lists (None: it lists none).

        Measured once per reading, so every question of the reading sees the same window.
        """
        if not reading.questions:
            return None
        room = self._rooms.get(reading.id)
        if room is None:
            room = len(self._head) + max(self._asked_needs(asked) for asked in reading.questions)
            self._rooms = {reading.id: room}  # one reading at a time
        return room

    def _asked_needs(self, asked: AskedQuestion) -> int:
        if not asked.options:
            return len(self.encoder.encode_plain(asked.prompt.rstrip())) + asked.generate_tokens
        return self._needs(self._tokenise_question(asked.prompt, asked.options), asked.generate_tokens)

    # ------------------------------------------------------------ the reading state

    def _forward(self, cache: DynamicCache, ids: Sequence[int], progress: Progress | None) -> None:
        device = next(self.model.parameters()).device
        decoder = self.model.base_model
        for begin in range(0, len(ids), self.prefill_chunk):
            piece = torch.tensor(
                [list(ids[begin : begin + self.prefill_chunk])], dtype=torch.long, device=device
            )
            decoder(input_ids=piece, **with_cache(decoder, cache), use_cache=True)
            if progress is not None:
                progress(piece.shape[1])

    def _new_session(self, text: _Tokenised, window: int, stride: int) -> _Session:
        return _Session(text=text, window=window, stride=stride)

    @torch.inference_mode()
    def _advance(self, session: _Session, scenes_read: int, progress: Progress | None) -> int:
        """Read on to ``scenes_read`` pieces; returns the tokens the model processed for it."""
        n_new = session.text.upto(self.encoder, scenes_read)
        start = window_start(n_new, session.window, session.stride)
        processed = 0
        if session.cache is None or start != session.start:
            if session.cache is not None:  # the window slid: rebuild it from scratch
                session.rereads += 1
                session.reread_tokens += max(0, session.n_tokens - start)
            held = self._head + session.text.tokens[start:n_new]
            session.cache = DynamicCache(config=self.model.config)
            self._forward(session.cache, held, progress)
            session.length = len(held)
            processed = len(held)
        else:
            new = session.text.tokens[session.n_tokens : n_new]
            self._forward(session.cache, new, progress)
            session.length += len(new)
            processed = len(new)
        session.scenes_read, session.n_tokens, session.start = scenes_read, n_new, start
        return processed

    def _session_for(self, request: ReadAlongRequest) -> _Session:
        window, stride = request.policy.resolved(self.max_length, self.question_room(request.reading))
        text = self._tokenised(request.reading)
        session = self._session
        if self.mode == "reread":
            return self._new_session(text, window, stride)
        if (
            session is None
            or session.text is not text
            or (session.window, session.stride) != (window, stride)
            or request.scenes_read < session.scenes_read
        ):
            session = self._new_session(text, window, stride)
            self._session = session
        return session

    # ------------------------------------------------------------ answering

    def _check_fit(self, request: ReadAlongRequest, session: _Session, question: _Question, n: int) -> None:
        start = window_start(n, session.window, session.stride)
        held = len(self._head) + n - start
        longest = max((len(o) for o in question.options), default=1)
        needed = held + self._needs(question, request.generate_tokens)
        if needed > self.max_length:
            raise ContextTooLongError(
                f"reading {request.reading.id!r} after {request.scenes_read} scenes: the held reading "
                f"({held} tokens), the prompt ({len(question.prompt)}) and the longest option ({longest}) "
                f"or generation ({request.generate_tokens}) need {needed} positions but the model's window "
                f"is {self.max_length}; lower the reading window or raise question_room"
            )

    @torch.inference_mode()
    def _answer(self, request: ReadAlongRequest, progress: Progress | None) -> ReadAlongResult:
        question = self._question(request)
        session = self._session_for(request)
        n = session.text.upto(self.encoder, request.scenes_read)
        self._check_fit(request, session, question, n)
        processed = self._advance(session, request.scenes_read, progress)
        assert session.cache is not None
        fork = fork_cache(session.cache)
        self._forward(fork, question.prompt[:-1], progress)
        prefix = _ForkedPrefix(fork, session.length + len(question.prompt) - 1)
        last = question.prompt[-1]
        scores = (
            score_on_prefix(
                self.model,
                prefix,
                last,
                question.options,
                chunk=self.prefill_chunk,
                batch_size=self.batch_size,
                token_budget=max(DEFAULT_TOKEN_BUDGET, self.prefill_chunk),
                progress=progress,
            )
            if question.options
            else []
        )
        processed += len(question.prompt) - 1 + sum(len(o) for o in question.options)
        generated = None
        if request.generate_tokens:
            generated, fed = self._generate(prefix, last, request, progress)
            processed += fed
        return ReadAlongResult(
            scores=tuple(
                ContinuationScore(
                    logprob=score.logprob,
                    n_tokens=len(ids),
                    n_tokens_original=len(ids),
                    is_greedy=score.is_greedy,
                    scored_text=str(self.tokenizer.decode(ids)),
                )
                for score, ids in zip(scores, question.options, strict=True)
            ),
            book_tokens=session.n_tokens,
            window_start=session.start,
            prompt_tokens=len(question.prompt),
            rereads=session.rereads,
            reread_tokens=session.reread_tokens,
            processed_tokens=processed,
            policy=f"sliding(window={session.window},stride={session.stride})",
            window=session.window,
            question_room=self._room_used(request),
            generated=generated,
        )

    def _room_used(self, request: ReadAlongRequest) -> int:
        """The room the window left for the question (0 when the policy gave the window)."""
        policy = request.policy
        if policy.window is not None:
            return 0
        if policy.question_room is not None:
            return policy.question_room
        measured = self.question_room(request.reading)
        return FALLBACK_QUESTION_ROOM if measured is None else measured

    def _generate(
        self, prefix: _ForkedPrefix, last: int, request: ReadAlongRequest, progress: Progress | None
    ) -> tuple[str, int]:
        """Greedy generation after the prompt on a fork of the question state: (text, tokens fed)."""
        decoded = decode_on_cache(
            self.model,
            self.tokenizer,
            prefix.growable_copy(),
            Decoding(prompt=(last,), max_tokens=request.generate_tokens, stop=tuple(request.stop)),
            progress,
        )
        # one forward per generated token, plus the one that chose the end-of-text token
        return decoded.text, decoded.n_generated_tokens + int(decoded.stopped_by == STOPPED_BY_EOS)

    def answer(
        self, requests: Sequence[ReadAlongRequest], progress: Progress | None = None
    ) -> list[ReadAlongResult]:
        """Answer in order; a session carries over from one call to the next while positions move on."""
        return [self._answer(request, progress) for request in requests]

    def reset(self) -> None:
        """Forget the session (the next request reads its book from the start)."""
        self._session = None
