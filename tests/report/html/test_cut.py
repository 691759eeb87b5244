"""The report's exact cut against the backends' own cut, and the runs whose tokenizer it cannot load.

The cut a report finds (its own load of the run's tokenizer) must start the kept text exactly
where :func:`~longread.models.tokens.encode_request`, run by the real backend's encoder, kept
the last ``max_context_tokens`` text tokens — for SmolLM2 (no BOS) and Gemma 3 (a BOS that is
not counted).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from longread.models.requests import LoglikelihoodRequest
from longread.models.tokens import encode_request
from longread.report.html.cut import TokenizerUnavailable, cut_finder
from tests.models_fixtures import backend, book_text

CUTS = {1, 7, 100, 513}


@pytest.mark.parametrize("spec", ["smollm2", "gemma3"])
def test_the_report_cuts_where_the_backend_cut(spec: str) -> None:
    model = backend(spec)
    context = book_text()[60_000:66_000] + " \n"  # curly quotes, underscores, trailing whitespace
    finder = cut_finder({"backend": "hf", "spec": spec})
    if spec == "gemma3":  # the folder the backend loaded, not one an older install may have left
        assert Path(finder.tokenizer.name_or_path) == Path(model.loaded.weights)
    starts = finder.kept_starts(context, CUTS | {10**6})
    assert set(starts) == CUTS, "a count beyond the prefix's tokens has no cut"
    for keep in CUTS:
        request = LoglikelihoodRequest(context=context, continuations=(" x",), max_context_tokens=keep)
        group = encode_request(model.encoder, request, max_length=4096)
        assert group.context_tokens_kept == keep
        kept_text = context.rstrip()[starts[keep] :]
        assert model.encoder.encode_plain(kept_text) == list(group.context[group.context_start_tokens :])
        assert len(model.encoder.encode_plain(context[starts[keep] - 1 :].rstrip())) > keep


def test_a_served_model_on_the_servers_tokenizer_is_approximate_and_says_why() -> None:
    with pytest.raises(TokenizerUnavailable, match="server's own tokenizer"):
        cut_finder({"backend": "openai", "name": "m", "tokenizer": "server"})


def test_a_missing_tokenizer_folder_is_said() -> None:
    with pytest.raises(
        TokenizerUnavailable, match="tokenizer hf:/nowhere not loadable here: no tokenizer folder"
    ):
        cut_finder({"backend": "hf", "spec": "hf:/nowhere"})


def test_a_ranker_has_no_tokenizer_the_report_knows() -> None:
    with pytest.raises(TokenizerUnavailable, match="suffixlm backend"):
        cut_finder({"backend": "suffixlm", "spec": "suffixlm"})


def test_an_empty_or_whole_prefix_cut() -> None:
    finder = cut_finder({"backend": "openai", "tokenizer": "smollm2"})
    assert finder.kept_starts("   \n", {0, 1}) == {0: 0}
    text = "It was a dark and stormy night.  \n"
    whole = len(finder.encoder.encode(text.rstrip()))
    assert finder.kept_starts(text, {0, whole}) == {0: len(text.rstrip()), whole: 0}
