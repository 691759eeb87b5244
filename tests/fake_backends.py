"""Scripted backends that keep the request contract without torch, so the runner is tested in milliseconds.

They are not stand-ins for a model under test: they drive the *runner* (keys,
resume, errors, reuse, ties, batching) with answers the test controls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from longread.models.requests import (
    LANGUAGE_MODEL_CAPABILITIES,
    RANKER_CAPABILITIES,
    READ_ALONG,
    ContinuationScore,
    GenerateRequest,
    GenerateResult,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    Progress,
    RankRequest,
    RankResult,
    ReadAlongRequest,
    ReadAlongResult,
    RollingRequest,
    RollingResult,
)


def words(text: str) -> list[str]:
    return text.split()


@dataclass
class ScriptedLM:
    """A 'language model' whose tokens are words: a continuation's log-prob comes from ``score``.

    ``fail_when(request)`` returning a message makes that request raise; ``calls``
    records the size of every batch the runner sent.
    """

    score: Callable[[str, str], float] = lambda context, continuation: -float(len(continuation))
    fail_when: Callable[[LoglikelihoodRequest], str | None] = lambda request: None
    name: str = "scripted-lm"
    max_length: int = 10_000
    capabilities: frozenset[str] = LANGUAGE_MODEL_CAPABILITIES
    preferred_batch: int = 1
    calls: list[int] = field(default_factory=list)

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], progress: Progress | None = None
    ) -> list[LoglikelihoodResult]:
        self.calls.append(len(requests))
        results = []
        for request in requests:
            problem = self.fail_when(request)
            if problem:
                raise RuntimeError(problem)
            context = words(request.context)
            kept = context[-request.max_context_tokens :] if request.max_context_tokens else context
            kept_text = " ".join(kept)
            scores = []
            for continuation in request.continuations:
                tokens = words(continuation)
                cut = tokens[: request.max_continuation_tokens] if request.max_continuation_tokens else tokens
                scores.append(
                    ContinuationScore(
                        logprob=self.score(kept_text, " ".join(cut)),
                        n_tokens=len(cut),
                        n_tokens_original=len(tokens),
                        is_greedy=False,
                        scored_text=" ".join(cut),
                    )
                )
            results.append(LoglikelihoodResult(tuple(scores), len(context), len(kept)))
        return results

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], progress: Progress | None = None
    ) -> list[RollingResult]:
        return [RollingResult(-float(len(words(r.text))), len(words(r.text))) for r in requests]

    def generate(
        self, requests: Sequence[GenerateRequest], progress: Progress | None = None
    ) -> list[GenerateResult]:
        return [GenerateResult("answer", 1, 1, "eos") for _ in requests]

    def count_tokens(self, text: str) -> int:
        return len(words(text))

    def describe(self) -> dict[str, str]:
        return {"name": self.name, "backend": "scripted"}


@dataclass
class ScriptedRanker:
    """A ranker whose score is the number of context words shared with the candidate (ties are easy)."""

    name: str = "scripted-ranker"
    capabilities: frozenset[str] = RANKER_CAPABILITIES
    calls: list[int] = field(default_factory=list)

    def rank(self, requests: Sequence[RankRequest], progress: Progress | None = None) -> list[RankResult]:
        self.calls.append(len(requests))
        results = []
        for request in requests:
            context = words(request.context)
            kept = context[-request.max_context_tokens :] if request.max_context_tokens else context
            seen = set(kept)
            scores, lengths, originals = [], [], []
            for candidate in request.candidates:
                tokens = words(candidate)
                cut = tokens[: request.max_candidate_tokens] if request.max_candidate_tokens else tokens
                scores.append(float(sum(1 for token in cut if token in seen)))
                lengths.append(len(cut))
                originals.append(len(tokens))
            results.append(
                RankResult(tuple(scores), len(context), len(kept), tuple(lengths), tuple(originals))
            )
        return results

    def count_tokens(self, text: str) -> int:
        return len(words(text))

    def describe(self) -> dict[str, str]:
        return {"name": self.name, "backend": "scripted-ranker"}


@dataclass
class ScriptedReader(ScriptedLM):
    """A language model with read-along: words are tokens, the held text is the last ``window`` words.

    It keeps the contract (a session continues while positions move forward in one
    reading, restarts otherwise) and records every (reading id, scenes read) it was
    asked, so runner tests can check the order questions arrive in.
    """

    name: str = "scripted-reader"
    capabilities: frozenset[str] = LANGUAGE_MODEL_CAPABILITIES | {READ_ALONG}
    asked: list[tuple[str, int]] = field(default_factory=list)
    restarts: int = 0
    _position: tuple[str, int] | None = None

    def read_along(
        self, requests: Sequence[ReadAlongRequest], progress: Progress | None = None
    ) -> list[ReadAlongResult]:
        self.calls.append(len(requests))
        results = []
        for request in requests:
            reading = request.reading
            self.asked.append((reading.id, request.scenes_read))
            if (
                self._position is None
                or self._position[0] != reading.id
                or self._position[1] > request.scenes_read
            ):
                self.restarts += 1
            self._position = (reading.id, request.scenes_read)
            book = words("".join(reading.pieces[: request.scenes_read]))
            window, _ = request.policy.resolved(self.max_length)
            start = max(0, len(book) - window)
            held = " ".join(book[start:])
            scores = tuple(
                ContinuationScore(
                    self.score(held, option), len(words(option)), len(words(option)), False, option
                )
                for option in request.options
            )
            results.append(
                ReadAlongResult(
                    scores=scores,
                    book_tokens=len(book),
                    window_start=start,
                    prompt_tokens=len(words(request.prompt)),
                    rereads=0,
                    reread_tokens=0,
                    processed_tokens=len(book) + sum(len(words(o)) for o in request.options),
                    policy=f"scripted(window={window})",
                    generated=" 1" if request.generate_tokens else None,
                )
            )
        return results
