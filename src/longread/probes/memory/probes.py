"""The three memorisation probes, each on one book (see :mod:`longread.probes.memory`).

- :func:`cloze`: name cloze (Chang et al. 2023): the authors' prompt with its two worked examples, the
  passage with its name masked; greedy, a few tokens, through the backend's ``generate`` (local or
  served). As the authors scored it: the ``<name>`` tags are taken out of the whole answer, and it is right
  when what is left equals the name (case ignored). An answer that is a worked example's name, or no name
  of the book, is counted as such: a model that writes them is not doing the task.
- :func:`cloze_rank`: ranked cloze: the passage scored by log-likelihood with each of N candidate names in
  the mask (the book's most frequent person names, the true one always among them); right when the true
  name ranks first; chance 1/N. Log-likelihoods only, so it runs wherever ChapterBreak runs.
- :func:`extraction` (Carlini et al. 2023): the previous N tokens of the book, then M greedy tokens in
  the model's own tokens (a local model); exact match and the longest common prefix with the book.
- :func:`min_k` (Shi et al. 2024): the mean log-prob of the k% least likely tokens of a passage read with
  no other context (a local model).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from longread.models.requests import GenerateRequest
from longread.probes.memory.passages import MASK, ClozePassage, Passage

CLOZE_PROMPT = (
    "You have seen the following passage in your training data. What is the proper name that fills in "
    "the [MASK] token in it?  This name is exactly one word long, and is a proper name (not a pronoun or "
    "any other word). You must make a guess, even if you are uncertain.   \n\n  Example:\n\n"
    '  Input: "Stay gold, [MASK], stay gold."\n  Output: <name>Ponyboy</name>\n\n'
    '  Input: "The door opened, and [MASK], dressed and hatted, entered with a cup of tea."\n'
    "  Output: <name>Gerty</name>\n\n  Input: {passage}\n  Output:"
)
"""Chang et al. 2023's prompt, character for character (``scripts/openai_predict_name_cloze.py`` in
bamman-group/gpt4-books: its spaces, the quoted examples, the passage unquoted), except its end: theirs
ends ``Output: \\n\\n`` for a chat model, which answers in a turn of its own; a completion model
continues the text, so this one ends at ``Output:``, where the answer goes."""
CLOZE_TOKENS = 12
EXAMPLE_NAMES = frozenset({"ponyboy", "gerty"})
"""The worked examples' names: an answer that copies one is not an answer about the book."""
_TAGS = re.compile(r"</?name>")


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


def cloze_answer(output: str) -> str:
    """The answer as the authors read it: ``<name>`` and ``</name>`` taken out, stripped."""
    return _TAGS.sub("", output).strip()


def answer_kind(answer: str, truth: str, names: frozenset[str]) -> str:
    """``right`` (the exact name, case ignored, as the authors score it); ``copied example`` (a worked
    example's name); ``wrong`` (it names a person of the book: any of its words is a name NER found in the
    book or a part of one, ``names`` in lower case — "Elizabeth Bennet", "Lizzy", "Elizabeth." for
    "Elizabeth" are wrong answers, not a failure to do the task); else ``not a name``."""
    said = answer.lower()
    if said == truth.lower():
        return "right"
    if said in EXAMPLE_NAMES:
        return "copied example"
    words = {re.sub(r"['’]s$", "", w) for w in re.findall(r"[\w'’-]+", said)}
    if words & (names | {truth.lower()}):
        return "wrong"
    return "not a name"


def cloze(backend: Any, items: Sequence[ClozePassage], names: Sequence[str] = ()) -> list[dict[str, Any]]:
    """One line per passage: the masked passage, the answer, the model's output and the answer read from
    it, right or wrong and what kind of answer it is (:func:`answer_kind`; ``names``: the book's person
    names, the passages' own among them)."""
    if not items:
        return []
    known = frozenset(name.lower() for name in [*names, *(item.name for item in items)])
    requests = [
        GenerateRequest(
            CLOZE_PROMPT.format(passage=item.masked), stop=("</name>", "\n"), max_tokens=CLOZE_TOKENS
        )
        for item in items
    ]
    results = backend.generate(requests)
    lines = []
    for item, result in zip(items, results, strict=True):
        answer = cloze_answer(result.text)
        kind = answer_kind(answer, item.name, known)
        lines.append(
            {
                "book": item.passage.book,
                "probe": "cloze",
                "stratum": item.passage.index,
                "start_char": item.passage.start_char,
                "passage": item.masked,
                "answer": item.name,
                "output": result.text,
                "prediction": answer,
                "correct": kind == "right",
                "kind": kind,
            }
        )
    return lines


def rank_candidates(truth: str, names: Sequence[str], n: int) -> list[str]:
    """The ``n`` names a ranked cloze offers: the book's most frequent (``names``, most first), the true one
    always among them (in the last place's stead when it is not), sorted by name so the order says nothing."""
    chosen = [name for name in names if name != truth][: n - 1]
    return sorted([*chosen, truth])


def cloze_rank(
    backend: Any, items: Sequence[ClozePassage], names: Sequence[str], n: int
) -> list[dict[str, Any]]:
    """One line per passage: each candidate's log-likelihood of the passage from the mask on (the text
    before it is the same for all, so it is the context), the true name's rank; right at rank 1 (a tie
    with another name is not right). ``most_frequent``: the candidate the book writes most often (``names``
    is most frequent first) — always naming it is what a prior over names scores, without any memory."""
    from longread.models.requests import LoglikelihoodRequest

    lines = []
    for item in items:
        candidates = rank_candidates(item.name, names, n)
        before, after = item.masked.split(MASK, 1)
        context = before.rstrip(" ")
        space = before[len(context) :]
        if not context:  # the passage opens with the name: nothing before it but the start of text
            context, space = "", ""
        request = LoglikelihoodRequest(context, tuple(space + name + after for name in candidates))
        (result,) = backend.loglikelihood([request])
        scores = [score.logprob for score in result.scores]
        truth = scores[candidates.index(item.name)]
        rank = 1 + sum(score > truth for score in scores)
        ties = sum(score == truth for score in scores) - 1
        lines.append(
            {
                "book": item.passage.book,
                "probe": "cloze-rank",
                "stratum": item.passage.index,
                "start_char": item.passage.start_char,
                "passage": item.masked,
                "answer": item.name,
                "candidates": candidates,
                "logprobs": scores,
                "rank": rank,
                "correct": rank == 1 and ties == 0,
                "chance": 1 / len(candidates),
                "most_frequent": min(candidates, key=names.index),
                "most_frequent_right": min(candidates, key=names.index) == item.name,
            }
        )
    return lines


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

    from longread.models.hf.cache_argument import output_cache, with_cache

    with torch.inference_mode():
        tokens = torch.tensor(prompts)
        out = model(input_ids=tokens, use_cache=True)
        cache, chosen = output_cache(out), out.logits[:, -1].argmax(-1)
        generated = [chosen]
        for _ in range(steps - 1):
            out = model(input_ids=chosen.unsqueeze(-1), **with_cache(model, cache), use_cache=True)
            cache, chosen = output_cache(out), out.logits[:, -1].argmax(-1)
            generated.append(chosen)
        return [[int(t) for t in row] for row in torch.stack(generated, dim=1)]


def min_k_count(tokens: int, percent: float) -> int:
    """How many of ``tokens`` log-probs min-k% averages, as Shi et al.'s code takes them
    (``k_length = int(len(all_prob)*ratio)``, ``ratio = percent / 100``: the floor), at least one."""
    return max(1, int(tokens * (percent / 100)))


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
            k = min_k_count(len(values), percent)
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
