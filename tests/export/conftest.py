"""Real ChapterBreak data for the export tests: instances built from Pride and Prejudice."""

from __future__ import annotations

from pathlib import Path

import pytest

from longread.benchmarks.chapterbreak.build import BuildOptions
from longread.benchmarks.chapterbreak.io import load_instances, write_instances
from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak
from tests.models_fixtures import PRIDE_AND_PREJUDICE

LENGTHS = (64, 128)
SUFFIX_TOKENS = 32


@pytest.fixture(scope="session")
def chapterbreak_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three real instances (prefixes of 160 GPT-2 tokens, six candidates each)."""
    folder = tmp_path_factory.mktemp("export-data")
    whole = folder / "all.jsonl"
    build_chapterbreak(
        [PRIDE_AND_PREJUDICE], whole, BuildOptions(prefix_tokens=160, suffix_tokens=48), show_progress=False
    )
    path = folder / "chapterbreak.jsonl"
    write_instances(load_instances(whole)[:3], path)
    return path
