"""Fit a prompt made of a long document and a short instruction into a token budget.

ZeroSCROLLS' rule: cut the document, never the question. A
:class:`~longread.models.requests.DocumentPrompt` is encoded part by part —
``preamble`` + ``document`` + ``instruction`` — and only the document loses
tokens, from the side the task names:

- ``left``: drop the start, keep the end (the reading so far, as in NarrativeXL);
- ``right``: drop the end, keep the start (a paper's introduction, as in MuLD's VLSP);
- ``middle``: keep the start and the end, drop the middle.

What was cut is returned, so a backend can put it in its result and the runner
on the sample's row. The start-of-sequence token a tokenizer adds is kept in
front and counts against the budget like any fixed part.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from longread.models.errors import ContextTooLongError
from longread.models.requests import DocumentPrompt
from longread.models.requests.control import ControlRecord, apply_control


@dataclass(frozen=True, slots=True)
class FittedPrompt:
    token_ids: tuple[int, ...]
    """BOS (if the tokenizer adds one), preamble, the kept document, instruction."""
    document_tokens_original: int
    document_tokens_kept: int
    cut_side: str
    control: ControlRecord | None = None
    """What the prompt's context control did to the kept document (None: no control)."""
    instruction_tokens: int = 0
    """Tokens of the instruction at the end (what a press leaves uncompressed)."""
    preamble_tokens: int = 0
    """Tokens of the preamble before the document (part of the instruction: a press keeps it whole)."""
    start_tokens: int = 0
    """The start token in front of everything (0 or 1)."""

    @property
    def document_span(self) -> tuple[int, int]:
        """Where the document read lies in ``token_ids`` (start, end)."""
        start = self.start_tokens + self.preamble_tokens
        return start, len(self.token_ids) - self.instruction_tokens

    @property
    def document_cut(self) -> bool:
        return self.document_tokens_kept < self.document_tokens_original


def keep_document_tokens(tokens: list[int], keep: int, side: str) -> list[int]:
    """``keep`` of ``tokens``, dropping from ``side`` (left: the start; right: the end; middle)."""
    if keep >= len(tokens):
        return list(tokens)
    if keep <= 0:
        return []
    if side == "left":
        return tokens[len(tokens) - keep :]
    if side == "right":
        return tokens[:keep]
    if side == "middle":
        head = (keep + 1) // 2
        return tokens[:head] + tokens[len(tokens) - (keep - head) :]
    raise ValueError(f"unknown cut side {side!r}; use left, right or middle")


def fit_document_prompt(
    prompt: DocumentPrompt,
    encode_plain: Callable[[str], list[int]],
    budget: int,
    *,
    bos_id: int | None = None,
) -> FittedPrompt:
    """Token ids of ``prompt`` in at most ``budget`` tokens, cutting the document only.

    ``encode_plain`` encodes without special tokens; ``bos_id`` is prepended when
    the model's tokenizer adds a start token. The document's own limit
    (``max_document_tokens``) applies first. If the fixed parts alone do not fit,
    that is an error naming the sizes — the instruction is never cut.
    """
    start = [bos_id] if bos_id is not None else []
    preamble = encode_plain(prompt.preamble) if prompt.preamble else []
    head = start + preamble
    tail = encode_plain(prompt.instruction) if prompt.instruction else []
    document = encode_plain(prompt.document) if prompt.document else []
    room = budget - len(head) - len(tail)
    if room < 0 or (room == 0 and document):
        raise ContextTooLongError(
            f"the instruction ({len(tail)} tokens) and preamble ({len(head)} tokens) leave "
            f"{max(room, 0)} of {budget} tokens for the document; the instruction is never cut — "
            "shorten it, lower the generation length or use a model with a longer window"
        )
    keep = (
        len(document)
        if prompt.max_document_tokens is None
        else min(len(document), prompt.max_document_tokens)
    )
    keep = min(keep, room)
    kept = keep_document_tokens(document, keep, prompt.cut)
    kept_tokens = len(kept)
    record = None
    if prompt.control is not None:  # on exactly the document the model reads; "none" only shortens it
        kept, record = apply_control(kept, prompt.control, start_tokens=0, encode_plain=encode_plain)
    return FittedPrompt(
        token_ids=tuple(head + kept + tail),
        document_tokens_original=len(document),
        document_tokens_kept=kept_tokens if record is None else len(kept),
        cut_side=prompt.cut,
        control=record,
        instruction_tokens=len(tail),
        preamble_tokens=len(preamble),
        start_tokens=len(start),
    )
