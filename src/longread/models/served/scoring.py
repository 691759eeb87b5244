"""Log-probs of token sequences read by a served model: the one primitive log-likelihood and rolling
log-likelihood are built on.

All prompts given to :meth:`PromptScorer.score` go out in ONE ``/v1/completions`` request (``prompt``
as a list), so all candidates of one context reach the server together and a server with a prefix
cache can read the shared context once. Each prompt is scored over positions ``[start, len)``: the
sum of the log-probs (nats, summed in double precision as the local backend sums them) and whether
every one of those tokens was the model's argmax.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from longread.models.errors import BadRequestError
from longread.models.served.client import ServedClient
from longread.models.served.protocol import (
    PromptScores,
    choices_in_order,
    echo_payload,
    echoed_offsets,
    prompt_scores,
)
from longread.models.served.tokenizer import ServedTokenizer

PromptForm = Literal["ids", "text"]


@dataclass(frozen=True, slots=True)
class EchoSettings:
    prompt_form: PromptForm = "ids"
    max_tokens: int = 0
    """0, or 1 for a server that refuses ``max_tokens: 0`` (the generated token is not read)."""


@dataclass(frozen=True, slots=True)
class SpanScore:
    logprob: float
    is_greedy: bool
    n_tokens: int
    route: str


class PromptScorer:
    def __init__(
        self,
        client: ServedClient,
        model: str,
        tokenizer: ServedTokenizer,
        settings: EchoSettings = EchoSettings(),
    ) -> None:
        self.client = client
        self.model = model
        self.tokenizer = tokenizer
        self.settings = settings

    def score(self, prompts: Sequence[Sequence[int]], starts: Sequence[int]) -> list[SpanScore]:
        """One request for all ``prompts``; positions ``starts[i] .. len(prompts[i]) - 1`` of each scored."""
        for prompt, start in zip(prompts, starts, strict=True):
            if not 1 <= start < len(prompt):
                raise ValueError(f"a scored span must start at 1 … {len(prompt) - 1}, got {start}")
        if self.settings.prompt_form == "ids":
            return self._score_ids(prompts, starts)
        return self._score_texts(prompts, starts)

    def _score_ids(self, prompts: Sequence[Sequence[int]], starts: Sequence[int]) -> list[SpanScore]:
        return [
            _span(scores, start - 1, len(prompt) - 1)
            for scores, prompt, start in zip(self._read_ids(prompts), prompts, starts, strict=True)
        ]

    def _read_ids(self, prompts: Sequence[Sequence[int]]) -> list[PromptScores]:
        """Every position's log-prob and greedy flag of each prompt (token ids), in one request."""
        payload = echo_payload(self.model, prompts, self.settings.max_tokens)

        def parse(body: Any) -> list[PromptScores]:
            choices = choices_in_order(body, len(prompts))
            return [prompt_scores(c, list(p), len(p)) for c, p in zip(choices, prompts, strict=True)]

        answers: list[PromptScores] = self.client.post("/completions", payload, parse)
        return answers

    def token_logprobs(self, prompts: Sequence[Sequence[int]]) -> list[tuple[float, ...]]:
        """The log-prob of every token after the first of each prompt (token ids), in one request."""
        if self.settings.prompt_form != "ids":
            raise BadRequestError(
                "per-token log-probs are read only from a server that takes token ids as the prompt; this "
                "one was found to take text"
            )
        answers = self._read_ids(prompts)
        return [scores.logprobs[: len(p) - 1] for scores, p in zip(answers, prompts, strict=True)]

    def _score_texts(self, prompts: Sequence[Sequence[int]], starts: Sequence[int]) -> list[SpanScore]:
        """Text prompts (a server that refuses ids): the scored tokens are those the server echoes at or
        after the character where the span starts; their number must equal the span's, else the
        server's tokenizer split the text otherwise and nothing is scored."""
        texts = [self.tokenizer.decode(list(p)) for p in prompts]
        boundaries = [len(self.tokenizer.decode(list(p[:s]))) for p, s in zip(prompts, starts, strict=True)]
        payload = echo_payload(self.model, texts, self.settings.max_tokens)

        def parse(body: Any) -> list[tuple[PromptScores, list[int]]]:
            choices = choices_in_order(body, len(texts))
            out = []
            for choice, text in zip(choices, texts, strict=True):
                offsets = (
                    [o for o in echoed_offsets(choice) if o < len(text)]
                    if self.settings.max_tokens
                    else echoed_offsets(choice)
                )
                out.append((prompt_scores(choice, None, len(offsets)), offsets))
            return out

        results = []
        for (scores, offsets), prompt, start, boundary in zip(
            self.client.post("/completions", payload, parse), prompts, starts, boundaries, strict=True
        ):
            first = next(
                (i for i, offset in enumerate(offsets) if i >= 1 and offset >= boundary), len(offsets)
            )
            if len(offsets) - first != len(prompt) - start:
                raise BadRequestError(
                    f"the server split the scored text into {len(offsets) - first} tokens where tokenizer "
                    f"{self.tokenizer.description!r} gives {len(prompt) - start}; name the server's own "
                    "tokenizer (tokenizer=hf:FOLDER) so text prompts split the same way"
                )
            results.append(_span(scores, first - 1, len(offsets) - 1))
        return results


def _span(scores: PromptScores, first: int, end: int) -> SpanScore:
    """Sum over ``scores`` entries ``first .. end - 1`` (entry k is prompt position k + 1)."""
    values = scores.logprobs[first:end]
    return SpanScore(
        logprob=float(sum(values)),
        is_greedy=all(scores.greedy[first:end]),
        n_tokens=len(values),
        route=scores.route,
    )
