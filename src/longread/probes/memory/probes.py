"""The three memorisation probes, each on one book (see :mod:`longread.probes.memory`).

- :func:`cloze`: name cloze (Chang et al. 2023): a fixed prompt with one worked example, the passage with
  its name masked; greedy, a few tokens, through the backend's ``generate`` (local or served); exact
  match of the name (case and the surrounding punctuation ignored).
- :func:`extraction` (Carlini et al. 2023): the previous N tokens of the book, then M greedy tokens in
  the model's own tokens (a local model); exact match and the longest common prefix with the book.
- :func:`min_k` (Shi et al. 2024): the mean log-prob of the k% least likely tokens of a passage read with
  no other context (a local model).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from longread.models.requests import GenerateRequest
from longread.probes.memory.passages import ClozePassage, Passage

CLOZE_PROMPT = (
    "You have seen the following passage in your training data. What is the proper name that fills in "
    "the [MASK] token in it? This name is exactly one word long, and is a proper name (not a pronoun or "
    "any other word). You must make a guess, even if you are uncertain.\n\n"
    "Example:\n\nInput: Stay gold, [MASK], stay gold.\nOutput: <name>Ponyboy</name>\n\n"
    "Input: {passage}\nOutput: <name>"
)
"""Chang et al. 2023's prompt (their worked example), ending where the name is to be written."""
CLOZE_TOKENS = 8


class ProbeUnavailable(Exception):
    """A probe this backend cannot run; the message says why (the other probes still run)."""


@dataclass(frozen=True)
class TokenAccess:
    """What extraction and min-k need of a backend: its tokenizer, greedy continuation of token ids and,
    where it can, the log-prob of every token of a sequence. A local model (HF, GGUF through its HF
    loader) gives both; a served model gives greedy ids when the server returns them (vLLM) and
    log-probs when its self-check passed."""

    encoder: Any
    """``encode_plain(text)``, ``start_token_id``."""
    greedy: Callable[[list[list[int]], int], list[list[int]]]
    logprobs: Callable[[list[list[int]]], list[list[float]]] | None
    why_no_logprobs: str = ""


def token_access(backend: Any, probe: str) -> TokenAccess:
    """The backend's :class:`TokenAccess`, or :class:`ProbeUnavailable` naming what ``probe`` needs."""
    model, encoder = getattr(backend, "model", None), getattr(backend, "encoder", None)
    if model is not None and encoder is not None:
        return TokenAccess(
            encoder,
            lambda prompts, steps: _greedy_batches(model, prompts, steps),
            lambda prompts: [_local_logprobs(model, prompt) for prompt in prompts],
        )
    greedy, tokenizer = getattr(backend, "greedy_ids", None), getattr(backend, "tokenizer", None)
    if callable(greedy) and tokenizer is not None:
        check = getattr(backend, "check", None)
        passed = bool(getattr(check, "passed", False))
        why = (
            ""
            if passed
            else f"the server's log-prob self-check did not pass ({check.summary() if check else '?'})"
        )
        return TokenAccess(tokenizer, greedy, backend.token_logprobs if passed else None, why)
    raise ProbeUnavailable(
        f"{probe} reads the model's own tokens: it needs a local model (smollm2, gemma3, hf:FOLDER) or a "
        f"served one (openai:URL#MODEL); {getattr(backend, 'name', type(backend).__name__)} is neither"
    )


def normalise_name(text: str) -> str:
    first = text.split("</name>")[0].strip().split()
    return re.sub(r"^[^\w]+|[^\w]+$", "", first[0]).lower() if first else ""


def cloze(backend: Any, items: Sequence[ClozePassage]) -> list[dict[str, Any]]:
    """One line per passage: the masked passage, the answer, the model's prediction, right or wrong."""
    if not items:
        return []
    requests = [
        GenerateRequest(
            CLOZE_PROMPT.format(passage=item.masked), stop=("</name>", "\n"), max_tokens=CLOZE_TOKENS
        )
        for item in items
    ]
    results = backend.generate(requests)
    return [
        {
            "book": item.passage.book,
            "probe": "cloze",
            "stratum": item.passage.index,
            "start_char": item.passage.start_char,
            "passage": item.masked,
            "answer": item.name,
            "prediction": result.text.strip(),
            "correct": normalise_name(result.text) == item.name.lower(),
        }
        for item, result in zip(items, results, strict=True)
    ]


@dataclass(frozen=True)
class Place:
    position: int
    """Index of the first token to continue (the prompt is the N tokens before it)."""
    why: str
    """``seeded``, ``chapter break`` or ``benchmark break`` (a break a built benchmark asks about)."""


@dataclass(frozen=True)
class Asked:
    """One extraction: the N tokens read, the M true tokens that follow, where and why."""

    prompt: list[int]
    truth: list[int]
    place: Place


def asked_at(ids: Sequence[int], places: Sequence[Place], prompt_tokens: int, new_tokens: int) -> list[Asked]:
    """The extraction at each place of one token sequence (each place has N tokens before, M after)."""
    return [
        Asked(
            list(ids[p.position - prompt_tokens : p.position]),
            list(ids[p.position : p.position + new_tokens]),
            p,
        )
        for p in places
    ]


def extraction(
    backend: Any, book: str, asked: Sequence[Asked], new_tokens: int, batch: int = 8
) -> list[dict[str, Any]]:
    """One line per place: prompt, truth and output ids, exact match, the common prefix in tokens."""
    access = token_access(backend, "extraction")
    head = [] if access.encoder.start_token_id is None else [access.encoder.start_token_id]
    lines = []
    for first in range(0, len(asked), batch):
        chosen = asked[first : first + batch]
        outputs = access.greedy([head + item.prompt for item in chosen], new_tokens)
        for item, output in zip(chosen, outputs, strict=True):
            common = next(
                (i for i, (a, b) in enumerate(zip(output, item.truth, strict=False)) if a != b),
                min(len(output), len(item.truth)),
            )
            lines.append(
                {
                    "book": book,
                    "probe": "extraction",
                    "position": item.place.position,
                    "place": item.place.why,
                    "prompt_ids": item.prompt,
                    "truth_ids": item.truth,
                    "output_ids": output,
                    "exact": output == item.truth,
                    "common_prefix": common,
                }
            )
    return lines


def _greedy_batches(model: Any, prompts: list[list[int]], steps: int) -> list[list[int]]:
    """``steps`` greedy tokens after each prompt (all of one length: no padding), with the KV cache."""
    import torch

    with torch.inference_mode():
        tokens = torch.tensor(prompts)
        out = model(input_ids=tokens, use_cache=True)
        cache, chosen = out.past_key_values, out.logits[:, -1].argmax(-1)
        generated = [chosen]
        for _ in range(steps - 1):
            out = model(input_ids=chosen.unsqueeze(-1), past_key_values=cache, use_cache=True)
            cache, chosen = out.past_key_values, out.logits[:, -1].argmax(-1)
            generated.append(chosen)
        return [[int(t) for t in row] for row in torch.stack(generated, dim=1)]


def min_k(backend: Any, items: Sequence[Passage], percent: float, batch: int = 8) -> list[dict[str, Any]]:
    """One line per passage: the mean log-prob of its ``percent``% least likely tokens (nats)."""
    access = token_access(backend, "min-k")
    if access.logprobs is None:
        raise ProbeUnavailable(f"min-k needs the log-prob of every token: {access.why_no_logprobs}")
    start = access.encoder.start_token_id
    lines = []
    for first in range(0, len(items), batch):
        chosen = items[first : first + batch]
        reads = [([start] if start is not None else []) + access.encoder.encode_plain(i.text) for i in chosen]
        for item, logprobs in zip(chosen, access.logprobs(reads), strict=True):
            values = sorted(float(v) for v in logprobs)
            k = max(1, math.ceil(len(values) * percent / 100))
            lines.append(
                {
                    "book": item.book,
                    "probe": "min_k",
                    "stratum": item.index,
                    "start_char": item.start_char,
                    "passage": item.text,
                    "tokens": len(values),
                    "score": sum(values[:k]) / k,
                }
            )
    return lines


def _local_logprobs(model: Any, read: list[int]) -> list[float]:
    """The log-prob of every token of ``read`` after the first, one forward pass."""
    import torch

    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([read])).logits[0].float()
        logprobs = torch.log_softmax(logits[:-1], dim=-1).gather(-1, torch.tensor(read[1:]).unsqueeze(-1))
    return [float(v) for v in logprobs.squeeze(-1)]
