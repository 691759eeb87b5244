"""Cuts whose text re-tokenises to exactly the tokens longread keeps, on real book text (GPT-2 BPE)."""

from __future__ import annotations

from longread.exportable.cuts import cut_context, cut_continuation
from longread.text.tokenizers import load_tokenizer
from tests.models_fixtures import book_text


def _text() -> tuple[str, str]:
    text = book_text()[20000:26000]
    return text[:3000], text[3000:]


def test_every_context_cut_re_tokenises_to_the_last_n_tokens() -> None:
    tokenizer = load_tokenizer("gpt2")
    context, _ = _text()
    ids = tokenizer.encode(context.rstrip()).ids
    for budget in range(1, 400, 7):
        cut = cut_context(tokenizer, context, budget)
        assert context.endswith(cut.text)
        assert cut.exact and cut.cut and cut.tokens == budget
        assert tokenizer.encode(cut.text.rstrip()).ids == ids[-budget:]
    whole = cut_context(tokenizer, context, len(ids) + 5)
    assert whole.text == context and not whole.cut and whole.tokens == len(ids)


def test_continuation_cuts_keep_longreads_first_tokens_or_say_they_cannot() -> None:
    """lm-eval's rule: tokens of context + continuation after those of the context alone."""
    tokenizer = load_tokenizer("gpt2")
    context, continuation = _text()
    head = context.rstrip()
    moved = context[len(head) :]
    n_head = len(tokenizer.encode(head).ids)
    ids = tokenizer.encode(head + moved + continuation).ids[n_head:]
    inexact = 0
    for budget in range(1, 200):
        cut = cut_continuation(tokenizer, context, continuation, budget)
        assert continuation.startswith(cut.text)
        kept = tokenizer.encode(head + moved + cut.text).ids[n_head:]
        assert cut.tokens == len(kept)
        assert cut.exact == (kept == ids[:budget])
        if cut.exact:
            assert cut.tokens == budget
        else:
            inexact += 1
    # A run of newlines before a word is one token at the end of a text but two before the word, so some
    # budgets end where no text does: those are reported as not exact, never passed off as exact.
    assert 0 < inexact < 5
