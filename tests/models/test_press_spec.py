"""``--press NAME[:RATIO]`` read by its rule (kvpress's class names, snake case) and refused where a press
cannot go — without kvpress, which only the presses' environment has."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from longread.cli.app import app
from longread.models.press_spec import PressError, PressSpec, parse_press, snake_name
from longread.models.registry import check_pressable

KNOWN = {
    snake_name(name): object for name in ("SnapKVPress", "StreamingLLMPress", "KeyDiffPress", "TOVAPress")
}


def test_names_are_kvpress_class_names_in_snake_case() -> None:
    assert sorted(KNOWN) == ["key_diff", "snapkv", "streaming_llm", "tova"]
    assert (
        snake_name("ExpectedAttentionPress") == "expected_attention"
        and snake_name("PyramidKVPress") == "pyramidkv"
    )
    assert parse_press("snapkv:0.25", KNOWN) == PressSpec("snapkv", 0.25)
    assert parse_press("StreamingLLM", KNOWN) == PressSpec("streaming_llm", 0.5)  # the ratio defaults to 0.5
    assert (
        parse_press("keydiff:0", KNOWN) == PressSpec("key_diff", 0.0)
        and str(PressSpec("tova", 0.75)) == "tova:0.75"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("snap:0.5", "unknown press 'snap' in 'snap:0.5'"),
        ("snapkv:1", "must be in [0, 1)"),
        ("snapkv:-0.1", "must be in [0, 1)"),
        ("snapkv:half", "the ratio must be a number"),
    ],
)
def test_a_bad_press_is_refused_naming_what_is_known(text: str, message: str) -> None:
    with pytest.raises(PressError) as caught:
        parse_press(text, KNOWN)
    assert message in str(caught.value)
    if "unknown" in message:
        assert "snapkv, streaming_llm, tova" in str(caught.value)


@pytest.mark.parametrize(
    ("spec", "mode", "message"),
    [
        ("suffixlm", "shared", "SuffixLM ranks with its own encoder"),
        ("openai:http://127.0.0.1:9/v1#m", "shared", "lives in its server"),
        ("style:stylometric", "shared", "no KV cache"),
        ("smollm2", "naive", "--mode naive cannot take one"),
    ],
)
def test_a_press_where_kvpress_cannot_reach_is_refused(spec: str, mode: str, message: str) -> None:
    with pytest.raises(PressError, match=message.replace("(", r"\(")):
        check_pressable(spec, PressSpec("snapkv", 0.5), mode)
    check_pressable("gemma3", PressSpec("snapkv", 0.5))


@pytest.mark.parametrize(
    ("task", "extra", "message"),
    [
        ("muld/vlsp", ["--distances", "128"], "plants copies in chapterbreak data only"),
        (
            "chapterbreak",
            ["--distances", "300", "--prefix-lengths", "256"],
            "at or beyond the prefix length 256",
        ),
        (
            "chapterbreak",
            ["--distances", "64", "--prefix-lengths", "256"],
            "must exceed the copy's 64 tokens",
        ),
    ],
)
def test_planted_distances_a_presses_run_cannot_hold_are_refused_first(
    task: str, extra: list[str], message: str, tmp_path: Path
) -> None:
    """Before kvpress is looked for (this environment has none) and before the model loads."""
    data = tmp_path / "data.jsonl"
    data.write_text("")
    result = CliRunner().invoke(
        app,
        ["presses", task, "--data", str(data), "--model", "smollm2", "--out", str(tmp_path / "o"), *extra],
    )
    assert result.exit_code != 0 and message in " ".join(result.output.split())
