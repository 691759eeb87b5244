"""MuLD's task names, what each one is, and the length filter every builder applies."""

from __future__ import annotations

from typing import Final, Literal

MuldTaskName = Literal[
    "narrativeqa", "hotpotqa", "character-archetype", "opensubtitles", "style-change", "vlsp"
]

TASKS: Final[tuple[str, ...]] = (
    "narrativeqa",
    "hotpotqa",
    "character-archetype",
    "opensubtitles",
    "style-change",
    "vlsp",
)
"""Short names; the registry and the CLI use ``muld/<name>``."""

QUESTION_TASKS: Final[frozenset[str]] = frozenset({"narrativeqa", "hotpotqa", "character-archetype"})
"""Tasks whose ``input`` holds a question (or a character name) before the document."""

MIN_TOKENS: Final[int] = 10_000
"""The paper's filter: every input has at least this many tokens."""

LENGTH_TOKENIZER: Final[str] = "gpt2"
"""Tokenizer of the length filter (GPT-2 BPE, :mod:`longread.text.tokenizers`); a build may name another."""

PUBLISHED_FILES: Final[dict[str, str]] = {
    "narrativeqa": "narrativeqa_{split}.json.bz2",
    "hotpotqa": "hotpotqa_{split}.json.bz2",
    "character-archetype": "character_id_{split}.json.bz2",
    "opensubtitles": "opensubtitles_{split}.json.bz2",
    "style-change": "style_change_{split}.json.bz2",
    "vlsp": "vlsp_{split}.json.bz2",
}
"""File names of the published data (the authors' Hugging Face repository)."""


def full_name(task: str) -> str:
    return f"muld/{task}"


def short_name(name: str) -> str:
    """``muld/vlsp`` or ``vlsp`` → ``vlsp``; an unknown name is an error that lists the known ones."""
    short = name.removeprefix("muld/")
    if short not in TASKS:
        raise ValueError(f"unknown MuLD task {name!r}; known: {', '.join(full_name(t) for t in TASKS)}")
    return short
