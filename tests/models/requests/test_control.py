"""Context controls on log-likelihood requests: the rule on token ids, then through a real model.

The rule (``apply_control``) is checked on plain id lists; the wiring (``encode_request``, which every
scoring backend uses: local HF and GGUF, served, Ray's replicas) with SmolLM2 on Pride and Prejudice
and with Gemma 3 270M, whose ``<bos>`` must stay first and unperturbed.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from longread.models.requests import LoglikelihoodRequest
from longread.models.requests.control import (
    ContextControl,
    Donor,
    NoDonorError,
    apply_control,
    ids_sha256,
)
from longread.models.tokens import encode_request
from tests.models_fixtures import backend, book_text

BOS = 2
TEXT = list(range(100, 140))  # 40 text tokens


def _encode_plain(text: str) -> list[int]:
    return [1000 + ord(character) for character in text]


def _apply(control: ContextControl, ids: list[int] = [BOS, *TEXT]) -> tuple[list[int], object]:  # noqa: B006
    return apply_control(ids, control, start_tokens=1, encode_plain=_encode_plain)


def test_shuffle_permutes_only_the_distant_part_and_keeps_the_start_token() -> None:
    read, record = _apply(ContextControl("shuffle", keep_last=10, seed=0, key="a"))
    assert read[0] == BOS and read[-10:] == TEXT[-10:]
    assert sorted(read[1:31]) == TEXT[:30] and read[1:31] != TEXT[:30]
    assert record.tokens_perturbed == 30 and record.read_sha256 == ids_sha256(read)  # type: ignore[attr-defined]
    again, _ = _apply(ContextControl("shuffle", keep_last=10, seed=0, key="a"))
    other_key, _ = _apply(ContextControl("shuffle", keep_last=10, seed=0, key="b"))
    other_seed, _ = _apply(ContextControl("shuffle", keep_last=10, seed=1, key="a"))
    assert again == read and other_key != read and other_seed != read


def test_none_drops_the_distant_part_and_keep_zero_perturbs_everything() -> None:
    read, record = _apply(ContextControl("none", keep_last=5))
    assert read == [BOS, *TEXT[-5:]] and record.tokens_perturbed == 35  # type: ignore[attr-defined]
    everything, record = _apply(ContextControl("none", keep_last=0))
    assert everything == [BOS] and record.tokens_perturbed == 40  # type: ignore[attr-defined]
    shuffled, record = _apply(ContextControl("shuffle", keep_last=0, key="k"))
    assert shuffled[0] == BOS and sorted(shuffled[1:]) == TEXT and record.tokens_perturbed == 40  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["shuffle", "replace", "none", "intact"])
def test_keeping_at_least_the_whole_context_changes_nothing(kind: str) -> None:
    donors = (Donor("other", "x" * 100),)
    for keep in (40, 41, 10_000):
        read, record = _apply(ContextControl(kind, keep_last=keep, key="k", donors=donors))  # type: ignore[arg-type]
        assert read == [BOS, *TEXT] and record.tokens_perturbed == 0  # type: ignore[attr-defined]


def test_replace_takes_one_contiguous_span_of_a_named_donor() -> None:
    donors = (
        Donor("book-b", "abcdefghijklmnopqrstuvwxyz" * 3),
        Donor("book-c", "ZYXWVUTSRQPONMLKJIHGFEDCBA" * 3),
    )
    read, record = _apply(ContextControl("replace", keep_last=8, seed=3, key="s", donors=donors))
    assert read[0] == BOS and read[-8:] == TEXT[-8:]
    (donor,) = record.donors  # type: ignore[attr-defined]
    source = _encode_plain(next(d.text for d in donors if d.id == donor))
    span = read[1:33]
    assert len(span) == 32 and any(source[i : i + 32] == span for i in range(len(source) - 31))
    assert record.as_row()["donors_joined"] is False  # type: ignore[attr-defined]


def test_replace_joins_donors_when_none_is_long_enough_and_refuses_without_any() -> None:
    donors = (Donor("short-1", "a" * 12), Donor("short-2", "b" * 12), Donor("short-3", "c" * 12))
    read, record = _apply(ContextControl("replace", keep_last=10, key="s", donors=donors))
    assert len(read) == 41 and len(record.donors) == 3 and record.as_row()["donors_joined"] is True  # type: ignore[attr-defined]
    with pytest.raises(NoDonorError, match="there is none"):
        _apply(ContextControl("replace", keep_last=10, key="s"))
    with pytest.raises(NoDonorError, match="together hold 12"):
        _apply(ContextControl("replace", keep_last=0, key="s", donors=donors[:1]))


def test_bad_controls_are_refused() -> None:
    with pytest.raises(ValueError, match="keep_last must be 0 or more"):
        ContextControl("shuffle", keep_last=-1)
    with pytest.raises(ValueError, match="unknown context control 'reverse'"):
        ContextControl("reverse")  # type: ignore[arg-type]


def _request(control: ContextControl | None) -> LoglikelihoodRequest:
    text = book_text()
    start = text.index("It is a truth universally acknowledged")
    return LoglikelihoodRequest(
        context=text[start : start + 3000],
        continuations=(" Mr. Bennet replied that he had not.", " The ship sailed at dawn."),
        max_context_tokens=400,
        control=control,
    )


def test_smollm2_reads_the_controlled_context_and_a_no_op_control_scores_to_the_bit() -> None:
    model = backend("smollm2")
    intact = model.loglikelihood([_request(None)])[0]
    no_op = model.loglikelihood([_request(ContextControl("shuffle", keep_last=400, key="k"))])[0]
    assert [s.logprob for s in no_op.scores] == [s.logprob for s in intact.scores]
    assert no_op.control is not None and no_op.control.tokens_perturbed == 0
    shuffled = model.loglikelihood([_request(ContextControl("shuffle", keep_last=32, key="k"))])[0]
    dropped = model.loglikelihood([_request(ContextControl("none", keep_last=32, key="k"))])[0]
    assert shuffled.control is not None and shuffled.control.tokens_perturbed == 400 - 32
    assert dropped.context_tokens_kept == 32 and intact.context_tokens_kept == 400
    for changed in (shuffled, dropped):
        assert [s.logprob for s in changed.scores] != [s.logprob for s in intact.scores]
        assert changed.control is not None and changed.control.read_sha256 != no_op.control.read_sha256


def test_gemma_keeps_its_bos_first_and_unperturbed_under_every_control() -> None:
    gemma = backend("gemma3")
    bos = gemma.encoder.start_token_id
    assert bos is not None
    donors = (Donor("other", book_text()[200_000:210_000]),)
    intact = encode_request(gemma.encoder, _request(None), gemma.max_length)
    for kind in ("shuffle", "replace", "none"):
        control = ContextControl(kind, keep_last=0, key="k", donors=donors)  # type: ignore[arg-type]
        group = encode_request(gemma.encoder, _request(control), gemma.max_length)
        assert group.context[0] == bos and bos not in group.context[1:], kind
        assert group.control is not None and group.control.tokens_perturbed == 400
        assert group.continuations == intact.continuations


def test_the_question_after_the_document_is_never_perturbed() -> None:
    model = backend("smollm2")
    text = book_text()
    start = text.index("It is a truth universally")
    question = "\n\nQuestion: who is the hero of this story? Answer:"
    request = LoglikelihoodRequest(
        context=text[start : start + 1500] + question, continuations=(" Darcy",), question_chars=len(question)
    )
    intact = encode_request(model.encoder, request, model.max_length)
    for kind in ("shuffle", "none"):
        controlled = replace(request, control=ContextControl(kind, keep_last=0, key="q"))  # type: ignore[arg-type]
        group = encode_request(model.encoder, controlled, model.max_length)
        asked = len(model.encoder.encode_plain(question.rstrip()))
        assert group.context[-asked:] == intact.context[-asked:], kind
        assert group.control is not None and group.control.tokens_perturbed >= len(intact.context) - asked - 1
    dropped = encode_request(
        model.encoder, replace(request, control=ContextControl("none", 0, key="q")), 2048
    )
    assert len(dropped.context) <= asked + 1  # only the question (and a token spanning the seam) is read
