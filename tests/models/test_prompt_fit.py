"""Document prompts: only the document is cut, from the named side; the instruction never is (GPT-2 BPE)."""

from __future__ import annotations

import functools

import pytest

from longread.models import ContextTooLongError
from longread.models.hf.loading import _gpt2_tokenizer
from longread.models.prompt_fit import fit_document_prompt, keep_document_tokens
from longread.models.requests import DocumentPrompt
from tests.models_fixtures import book_text


@functools.cache
def encode() -> object:
    tokenizer = _gpt2_tokenizer()
    return lambda text: list(tokenizer.encode(text, add_special_tokens=False))


def decode(ids: tuple[int, ...] | list[int]) -> str:
    return str(_gpt2_tokenizer().decode(list(ids)))


DOCUMENT = book_text()[40_000:60_000]
QUESTION = "\n\nQuestion: Who called on Mr. Bennet in the library?\nAnswer:"


@pytest.mark.parametrize("side", ["left", "right", "middle"])
def test_only_the_document_is_cut_from_the_named_side(side: str) -> None:
    prompt = DocumentPrompt(document=DOCUMENT, instruction=QUESTION, preamble="Read the story.\n\n", cut=side)  # type: ignore[arg-type]
    enc = encode()
    document_ids = enc(DOCUMENT)  # type: ignore[operator]
    fitted = fit_document_prompt(prompt, enc, 500)  # type: ignore[arg-type]
    assert len(fitted.token_ids) == 500
    assert fitted.document_tokens_original == len(document_ids) > 500
    head, tail = enc("Read the story.\n\n"), enc(QUESTION)  # type: ignore[operator]
    assert list(fitted.token_ids[: len(head)]) == head
    assert list(fitted.token_ids[-len(tail) :]) == tail  # the question is whole
    kept = list(fitted.token_ids[len(head) : -len(tail)])
    assert len(kept) == fitted.document_tokens_kept == 500 - len(head) - len(tail)
    if side == "left":
        assert kept == document_ids[-len(kept) :]
    elif side == "right":
        assert kept == document_ids[: len(kept)]
    else:
        half = (len(kept) + 1) // 2
        assert kept[:half] == document_ids[:half] and kept[half:] == document_ids[-(len(kept) - half) :]
    assert "Who called on Mr. Bennet" in decode(fitted.token_ids)


def test_a_document_that_fits_is_kept_whole_and_bos_leads() -> None:
    enc = encode()
    prompt = DocumentPrompt(document="It was a fine day.", instruction=" Q?")
    fitted = fit_document_prompt(prompt, enc, 100, bos_id=50256)  # type: ignore[arg-type]
    assert fitted.token_ids[0] == 50256 and not fitted.document_cut
    assert decode(fitted.token_ids[1:]) == "It was a fine day. Q?"


def test_the_document_limit_applies_before_the_window() -> None:
    prompt = DocumentPrompt(document=DOCUMENT, instruction=QUESTION, cut="right", max_document_tokens=64)
    fitted = fit_document_prompt(prompt, encode(), 10_000)  # type: ignore[arg-type]
    assert fitted.document_tokens_kept == 64 and fitted.document_cut


def test_an_instruction_that_does_not_fit_is_an_error_not_a_cut() -> None:
    prompt = DocumentPrompt(document=DOCUMENT, instruction=QUESTION * 20)
    with pytest.raises(ContextTooLongError, match="the instruction is never cut"):
        fit_document_prompt(prompt, encode(), 100)  # type: ignore[arg-type]


def test_keep_document_tokens_edges() -> None:
    assert keep_document_tokens([1, 2, 3, 4, 5], 3, "middle") == [1, 2, 5]
    assert keep_document_tokens([1, 2], 5, "left") == [1, 2]
    assert keep_document_tokens([1, 2], 0, "right") == []
    with pytest.raises(ValueError, match="unknown cut side"):
        keep_document_tokens([1, 2, 3], 1, "top")


def test_a_local_model_generates_from_a_cut_document_and_records_the_cut() -> None:
    from longread.evaluation.dispatch import context_was_cut
    from longread.models import GenerateRequest, load_backend

    backend = load_backend("random:gpt2", max_length=96)
    prompt = DocumentPrompt(document=DOCUMENT, instruction=QUESTION, cut="left")
    (result,) = backend.generate([GenerateRequest(prompt, max_tokens=4)])
    assert result.n_prompt_tokens == 96 - 4
    assert result.document_tokens_original == len(encode()(DOCUMENT))  # type: ignore[operator]
    assert result.document_tokens_kept == 92 - len(encode()(QUESTION))  # type: ignore[operator]
    assert context_was_cut(result) is True
