"""The read-along engine on real models and a real novel: read once, fork for each question, slide the window.

Every score is checked against an independent computation written here: one
plain transformers forward over ``[start token] + the held book tokens + the
prompt + the option``, summing the option's log-probabilities.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import pytest
import torch

from longread.models.hf.backend import HFBackend
from longread.models.hf.read_along import ReadAlongMode
from longread.models.requests import ReadAlongRequest, ReadAlongResult, Reading, ReadingPolicy, window_start
from tests.models_fixtures import PRIDE_AND_PREJUDICE, backend, book_text
from tests.tolerances import summed_logprob_tolerance

pytestmark = pytest.mark.skipif(not PRIDE_AND_PREJUDICE.is_file(), reason=f"{PRIDE_AND_PREJUDICE} is missing")

PROMPT = "\n\nQuestion: which of these happened in the story so far?\nAnswer:"


@functools.cache
def _scenes(n: int = 6, size: int = 280) -> tuple[str, ...]:
    """The first ``n`` scenes of ~``size`` characters of Pride and Prejudice, cut at sentence ends."""
    text = book_text()
    start = text.index("It is a truth universally acknowledged")
    scenes: list[str] = []
    while len(scenes) < n:
        end = text.index(". ", start + size) + 1
        scenes.append(re.sub(r"\s+", " ", text[start:end]).strip())
        start = end
    return tuple(scenes)


def _sentences(scene: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", scene) if len(s.split()) >= 6]


def _reading() -> Reading:
    scenes = _scenes()
    return Reading("pride-6", (scenes[0], *("\n\n" + scene for scene in scenes[1:])))


def _questions(reads: Sequence[int]) -> list[tuple[int, tuple[str, ...]]]:
    """(scenes read, options): a sentence of the last scene read, one of a later scene, none of the above."""
    scenes = _scenes()
    return [
        (
            read,
            (
                " " + _sentences(scenes[read - 1])[0],
                " " + _sentences(scenes[read % 6])[-1],
                " None of the above.",
            ),
        )
        for read in reads
    ]


def _requests(policy: ReadingPolicy, reads: Sequence[int] = (2, 4, 6)) -> list[ReadAlongRequest]:
    reading = _reading()
    return [ReadAlongRequest(reading, read, PROMPT, options, policy) for read, options in _questions(reads)]


def _independent(model: HFBackend, held: Sequence[int], option: str) -> tuple[float, int]:
    """log P(option | held + prompt) with one plain forward, lm-eval's boundary, no cache."""
    tokenizer = model.tokenizer
    prompt = tokenizer(PROMPT.rstrip(), add_special_tokens=False)["input_ids"]
    whole = tokenizer(PROMPT.rstrip() + option, add_special_tokens=False)["input_ids"]
    continuation = whole[len(prompt) :]
    ids = [*held, *prompt, *continuation]
    with torch.inference_mode():
        logits = model.model(input_ids=torch.tensor([ids[:-1]]), logits_to_keep=len(continuation)).logits[0]
    logprobs = torch.log_softmax(logits.double(), dim=-1)
    picked = logprobs.gather(-1, torch.tensor(continuation)[:, None])
    return float(picked.sum()), len(continuation)


def _book_tokens(model: HFBackend, scenes_read: int) -> list[int]:
    reading = _reading()
    return [t for piece in reading.pieces[:scenes_read] for t in model.encoder.encode_plain(piece)]


def _check_against_independent(model: HFBackend, request: ReadAlongRequest, result: ReadAlongResult) -> None:
    book = _book_tokens(model, request.scenes_read)
    assert result.book_tokens == len(book)
    head = [] if model.encoder.start_token_id is None else [model.encoder.start_token_id]
    held = head + book[result.window_start :]
    for option, score in zip(request.options, result.scores, strict=True):
        expected, n_tokens = _independent(model, held, option)
        assert score.n_tokens == n_tokens
        assert score.logprob == pytest.approx(expected, abs=summed_logprob_tolerance(n_tokens))


def _fresh(spec: str, mode: ReadAlongMode = "session", max_length: int | None = None) -> HFBackend:
    base = backend(spec)
    return HFBackend(
        base.loaded,
        spec=spec,
        prefill_chunk=64,
        read_along_mode=mode,
        max_length=max_length,
    )


@pytest.fixture(scope="module")
def smollm2() -> HFBackend:
    return backend("smollm2")


def test_the_window_rule_keeps_the_last_w_tokens_moving_in_strides() -> None:
    assert [window_start(n, 10, 5) for n in (0, 10, 11, 15, 16, 23)] == [0, 0, 5, 5, 10, 15]
    for n in range(200):
        start = window_start(n, 40, 15)
        assert start % 15 == 0 and n - start <= 40
        assert n <= 40 or n - start > 40 - 15
    assert ReadingPolicy().resolved(8192) == (8192 - 1024, (8192 - 1024) // 2)
    assert ReadingPolicy(window=100).resolved(8192) == (100, 50)
    with pytest.raises(ValueError, match="stride"):
        ReadingPolicy(window=10, stride=11)


def test_read_along_equals_reread_and_an_independent_forward_when_the_book_fits(smollm2: HFBackend) -> None:
    requests = _requests(ReadingPolicy(window=4096))
    along = _fresh("smollm2").read_along(requests)
    reread = _fresh("smollm2", "reread").read_along(requests)
    for a, b in zip(along, reread, strict=True):
        assert a.window_start == b.window_start == 0 and a.rereads == 0
        for x, y in zip(a.scores, b.scores, strict=True):
            assert x.logprob == pytest.approx(y.logprob, abs=summed_logprob_tolerance(x.n_tokens))
    _check_against_independent(smollm2, requests[-1], along[-1])  # the longest; the others equal reread
    # Read once: every book token is processed once, plus each question's own tokens.
    book = along[-1].book_tokens
    own = sum(r.prompt_tokens - 1 + sum(s.n_tokens for s in r.scores) for r in along)
    assert sum(r.processed_tokens for r in along) == book + own
    assert sum(r.processed_tokens for r in reread) == sum(r.book_tokens for r in reread) + own


def test_a_sliding_window_rereads_and_scores_what_it_holds(smollm2: HFBackend) -> None:
    policy = ReadingPolicy(window=120, stride=40)
    requests = _requests(policy, reads=(2, 3, 4, 5, 6))
    along = _fresh("smollm2").read_along(requests)
    reread = _fresh("smollm2", "reread").read_along(requests)
    assert along[-1].book_tokens > 3 * 120  # the book is several windows long
    assert along[-1].rereads >= 3 and along[-1].reread_tokens > 0
    for a, b in zip(along, reread, strict=True):
        assert a.window_start == b.window_start == window_start(a.book_tokens, 120, 40) > 0
        assert a.policy == "sliding(window=120,stride=40)"
        assert a.tokens_seen == a.book_tokens - a.window_start + a.prompt_tokens
        for x, y in zip(a.scores, b.scores, strict=True):
            assert x.logprob == pytest.approx(y.logprob, abs=summed_logprob_tolerance(x.n_tokens))
    for request, result in zip(requests[-2:], along[-2:], strict=True):
        _check_against_independent(smollm2, request, result)
    # What was read: the whole held window after a slide (re-read and new tokens), else the new tokens.
    own = sum(r.prompt_tokens - 1 + sum(s.n_tokens for s in r.scores) for r in along)
    expected, reread_tokens, previous = 0, 0, None
    for result in along:
        if previous is None or result.window_start != previous.window_start:
            expected += result.book_tokens - result.window_start
            if previous is not None:
                reread_tokens += max(0, previous.book_tokens - result.window_start)
        else:
            expected += result.book_tokens - previous.book_tokens
        previous = result
    assert sum(r.processed_tokens for r in along) == expected + own
    assert along[-1].reread_tokens == reread_tokens


def test_a_question_leaves_the_reading_untouched(smollm2: HFBackend) -> None:
    """The last question scores the same whether or not the earlier ones were asked (same session)."""
    requests = _requests(ReadingPolicy(window=4096))
    asked_all = _fresh("smollm2").read_along(requests)[-1]
    engine = _fresh("smollm2")
    only_last = engine.read_along([requests[-1]])[0]
    assert [s.logprob for s in asked_all.scores] == pytest.approx(
        [s.logprob for s in only_last.scores], abs=1e-4
    )
    # Asking the last question twice in a row, in the same session, changes nothing either.
    again = engine.read_along([requests[-1]])[0]
    assert [s.logprob for s in again.scores] == [s.logprob for s in only_last.scores]
    assert again.processed_tokens < only_last.processed_tokens  # the book was not read again


def test_options_only_reads_no_book(smollm2: HFBackend) -> None:
    request = _requests(ReadingPolicy())[0]
    blind = ReadAlongRequest(request.reading, 0, request.prompt, request.options)
    result = _fresh("smollm2").read_along([blind])[0]
    assert result.book_tokens == 0 and result.tokens_seen == result.prompt_tokens
    for option, score in zip(blind.options, result.scores, strict=True):
        expected, n_tokens = _independent(smollm2, [], option)
        assert score.logprob == pytest.approx(expected, abs=summed_logprob_tolerance(n_tokens))


def test_a_question_that_cannot_fit_is_an_error_naming_the_sizes() -> None:
    request = _requests(ReadingPolicy(window=300))[-1]
    small = _fresh("smollm2", max_length=200)  # holds 158 book tokens + a 17-token prompt + a 51-token option
    with pytest.raises(Exception, match="lower the reading window or raise question_room"):
        small.read_along([request])


def test_gemma_keeps_its_bos_at_position_0_through_rereads() -> None:
    gemma = backend("gemma3")
    assert gemma.encoder.start_token_id is not None
    requests = _requests(ReadingPolicy(window=100, stride=40), reads=(2, 3, 4, 5, 6))
    along = _fresh("gemma3").read_along(requests)
    assert along[-1].rereads >= 3 and along[-1].window_start > 0
    for request, result in zip(requests[-2:], along[-2:], strict=True):
        _check_against_independent(gemma, request, result)  # held = [<bos>] + the last tokens
