"""Cut texts to token budgets so that the cut TEXT re-tokenises to exactly the budget.

longread cuts token ids: a context keeps the last N tokens of ``tok(context.rstrip())``,
a continuation keeps the first S tokens of ``tok(context + continuation)[len(tok(context)):]``
(lm-eval's boundary rule: the context's trailing whitespace moves to the continuation).
A harness that only sees text re-tokenises it, so the cut must fall where the text's
own tokenisation gives the same ids. The cut first tries the char offset of longread's
token cut and keeps it when re-tokenising gives exactly longread's ids (``exact``);
otherwise (a cut inside a word whose pieces re-tokenise differently) it takes the
nearest char offset whose text re-tokenises to exactly N (or S) tokens, and the item is
counted as not exact. A text that already fits is kept whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from longread.text.tokenizers import NamedTokenizer

SEARCH_CHARS = 48
"""How far (characters) around longread's cut to look for a cut of exactly N tokens."""
BOUNDARY_TOKENS = 16
"""Tokens of context end re-tokenised with each continuation (tokens never reach further back)."""


@dataclass(frozen=True, slots=True)
class Cut:
    text: str
    tokens: int
    """Tokens of the kept text (the budget, unless the whole text fits or no exact count exists)."""
    tokens_original: int
    cut: bool
    exact: bool
    """The kept text re-tokenises to exactly the ids longread keeps."""


def _ids(tokenizer: NamedTokenizer, text: str) -> list[int]:
    return tokenizer.encode(text).ids


def _nearest(offsets: list[int], anchor: int) -> list[int]:
    return sorted(offsets, key=lambda offset: (abs(offset - anchor), offset))


def cut_context(tokenizer: NamedTokenizer, context: str, budget: int) -> Cut:
    """``context`` cut from the left to ``budget`` tokens of its right-stripped text (whitespace kept)."""
    stripped = context.rstrip()
    tail = context[len(stripped) :]
    encoding = tokenizer.encode(stripped)
    total = len(encoding.ids)
    if total <= budget:
        return Cut(context, total, total, cut=False, exact=True)
    index = total - budget
    anchor = int(encoding.starts[index])
    target = encoding.ids[index:]
    if _ids(tokenizer, stripped[anchor:]) == target:
        return Cut(stripped[anchor:] + tail, budget, total, cut=True, exact=True)
    low, high = max(0, anchor - SEARCH_CHARS), min(len(stripped), anchor + SEARCH_CHARS)
    for offset in _nearest(list(range(low, high + 1)), anchor):
        if len(_ids(tokenizer, stripped[offset:])) == budget:
            return Cut(stripped[offset:] + tail, budget, total, cut=True, exact=False)
    kept = stripped[anchor:]
    return Cut(kept + tail, len(_ids(tokenizer, kept)), total, cut=True, exact=False)


def _boundary(tokenizer: NamedTokenizer, context: str) -> str:
    """The end of ``context.rstrip()`` from a token start ``BOUNDARY_TOKENS`` tokens back."""
    stripped = context.rstrip()
    encoding = tokenizer.encode(stripped[-BOUNDARY_TOKENS * 32 :])
    if len(encoding.ids) <= BOUNDARY_TOKENS:
        return stripped
    start = int(encoding.starts[len(encoding.ids) - BOUNDARY_TOKENS])
    return stripped[-BOUNDARY_TOKENS * 32 :][start:]


def _continuation_ids(tokenizer: NamedTokenizer, head: str, continuation: str) -> list[int]:
    return _ids(tokenizer, head + continuation)[len(_ids(tokenizer, head)) :]


def cut_continuation(tokenizer: NamedTokenizer, context: str, continuation: str, budget: int) -> Cut:
    """``continuation`` cut from the right so that, after ``context``, it scores ``budget`` tokens.

    Tokens follow lm-eval's rule (trailing whitespace of the context joins the
    continuation); the returned text is the continuation alone, without that whitespace.
    """
    stripped = context.rstrip()
    moved = context[len(stripped) :]
    head = _boundary(tokenizer, context)
    whole = tokenizer.encode(head + moved + continuation)
    n_head = len(_ids(tokenizer, head))
    ids = whole.ids[n_head:]
    if len(ids) <= budget:
        return Cut(continuation, len(ids), len(ids), cut=False, exact=True)
    target = ids[:budget]
    start = len(head) + len(moved)
    anchor = int(whole.ends[n_head + budget - 1]) - start
    if _continuation_ids(tokenizer, head, moved + continuation[:anchor]) == target:
        return Cut(continuation[:anchor], budget, len(ids), cut=True, exact=True)
    low, high = max(1, anchor - SEARCH_CHARS), min(len(continuation), anchor + SEARCH_CHARS)
    for end in _nearest(list(range(low, high + 1)), anchor):
        if len(_continuation_ids(tokenizer, head, moved + continuation[:end])) == budget:
            return Cut(continuation[:end], budget, len(ids), cut=True, exact=False)
    kept = continuation[:anchor]
    return Cut(kept, len(_continuation_ids(tokenizer, head, moved + kept)), len(ids), cut=True, exact=False)
