"""Before any sample: does the server score prompts sanely? If not, it is not used for log-likelihood.

A short plain English text is scored by the server. The check fails — and the backend drops
``loglikelihood`` (and rolling log-likelihood) from its capabilities, staying usable for generation —
when the mean prompt log-prob is below ``MIN_MEAN_LOGPROB`` nats per token (any language model of
English does far better; llama.cpp's server echoes about -10 for every prompt token), when the
server's own tokenizer splits the text otherwise than the tokenizer longread encodes with, or when
the server cannot echo prompt log-probs at all. On the way it finds how prompts can be sent: token
ids first, then text, each with ``max_tokens: 0`` and then ``1``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from longread.errors import LongreadError
from longread.models.served.client import ServedClient, ServedRequestError
from longread.models.served.scoring import EchoSettings, PromptForm, PromptScorer, SpanScore
from longread.models.served.tokenizer import ServedTokenizer

logger = logging.getLogger(__name__)

MIN_MEAN_LOGPROB = -8.0
KNOWN_TEXT = (
    "The sun rose over the quiet village, and the farmers walked out to their fields. Children ran along "
    "the road to school, laughing and calling to one another. By noon the market was full of people buying "
    "bread, cheese and fresh vegetables."
)
_REFUSALS = (400, 404, 422)


@dataclass(frozen=True, slots=True)
class SelfCheck:
    passed: bool
    reason: str
    """Why it failed, or what was measured when it passed."""
    settings: EchoSettings
    route: str
    mean_logprob: float | None = None
    n_tokens: int = 0

    def summary(self) -> str:
        """For ``describe()``: stable across runs (no float), so resuming a run keeps its config hash."""
        if self.passed:
            return f"passed: sane prompt log-probs (mean >= {MIN_MEAN_LOGPROB:g} nats/token), tokens match"
        return f"failed, log-likelihood refused: {self.reason}"


def _server_tokens(client: ServedClient, model: str, text: str) -> list[int] | None:
    """The server's own tokens for ``text`` (vLLM's ``/tokenize``), or None without such an endpoint."""

    def parse(body: Any) -> list[int]:
        tokens = body.get("tokens") if isinstance(body, dict) else None
        return [int(t) for t in tokens] if isinstance(tokens, list) else []

    try:
        return client.post("/tokenize", {"model": model, "prompt": text}, parse, root=True)
    except ServedRequestError:
        return None


def _first_working(
    client: ServedClient,
    model: str,
    tokenizer: ServedTokenizer,
    ids: list[int],
    forms: tuple[PromptForm, ...],
) -> tuple[EchoSettings, SpanScore] | str:
    """The first (prompt form, max_tokens) the server scores the text with, or why none works."""
    refusals = []
    for form in forms:
        for max_tokens in (0, 1):
            settings = EchoSettings(form, max_tokens)
            try:
                (score,) = PromptScorer(client, model, tokenizer, settings).score([ids], [1])
                return settings, score
            except ServedRequestError as exc:
                if exc.status not in _REFUSALS:
                    return f"the server could not score the check text ({exc})"
                refusals.append(f"{form} prompts with max_tokens={max_tokens}: {exc}")
            except LongreadError as exc:
                return f"the check text could not be scored ({exc})"
    return "the server refused every way of echoing prompt log-probs: " + " | ".join(refusals)


def run_self_check(
    client: ServedClient, model: str, tokenizer: ServedTokenizer, prompt_form: str = "auto"
) -> SelfCheck:
    """Score :data:`KNOWN_TEXT`; see the module docstring for what fails the check."""
    ids = tokenizer.encode(KNOWN_TEXT)
    forms: tuple[PromptForm, ...] = ("ids", "text") if prompt_form == "auto" else (prompt_form,)  # type: ignore[assignment]
    found = _first_working(client, model, tokenizer, ids, forms)
    if isinstance(found, str):
        return SelfCheck(False, found, EchoSettings(forms[0]), "none")
    settings, score = found
    mean = score.logprob / score.n_tokens
    server_ids = _server_tokens(client, model, KNOWN_TEXT)
    if server_ids is not None and server_ids and server_ids != ids:
        pairs = zip(server_ids, ids, strict=False)
        first = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(ids), len(server_ids)))
        reason = (
            f"the server's tokenizer splits the check text into {len(server_ids)} tokens, tokenizer "
            f"{tokenizer.description!r} into {len(ids)} (first difference at token "
            f"{first}); "
            "name the served model's tokenizer (tokenizer=hf:FOLDER)"
        )
        return SelfCheck(False, reason, settings, score.route, mean, score.n_tokens)
    if mean < MIN_MEAN_LOGPROB:
        reason = (
            f"the mean prompt log-prob of a plain English text is {mean:.2f} nats/token over "
            f"{score.n_tokens} tokens (sane: >= {MIN_MEAN_LOGPROB:g}); this server echoes wrong prompt "
            "log-probs (llama.cpp's server does) — use it for generation only, or serve the model with "
            "vLLM for log-likelihood"
        )
        return SelfCheck(False, reason, settings, score.route, mean, score.n_tokens)
    measured = f"mean {mean:.3f} nats/token over {score.n_tokens} tokens"
    return SelfCheck(True, measured, settings, score.route, mean, score.n_tokens)
