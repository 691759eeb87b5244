"""Real ChapterBreak data for the export tests: instances built from Pride and Prejudice."""

from __future__ import annotations

import json
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


@pytest.fixture(scope="session")
def narrativexl_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A NarrativeXL build directory of one real book made without a model: Frankenstein's first four
    scenes (tests/benchmarks/narrativexl/books.py) with 9 read-along questions of 4 options drawn as the
    build draws them (decoys from two other novels), in the build's layout: ``books/84.tagseparated``
    (what the summaries task reads) and ``readalong/84.json`` (what the read-along task reads)."""
    import numpy as np

    from longread.benchmarks.narrativexl.official import write_tagseparated
    from longread.benchmarks.narrativexl.questions import QuestionSettings, make_readalong_questions
    from longread.benchmarks.narrativexl.schema import ReadingBook
    from tests.benchmarks.narrativexl.books import make_book

    out = tmp_path_factory.mktemp("narrativexl-build")
    book = make_book(84, 4)
    others = [make_book(gutenberg_id, 3) for gutenberg_id in (98, 345)]
    drawn = make_readalong_questions(book, others, np.random.default_rng(0), QuestionSettings(n_decoys=2))
    (out / "books").mkdir()
    (out / "readalong").mkdir()
    write_tagseparated(book, out / "books" / "84.tagseparated")
    reading = ReadingBook(
        book_id=book.book_id, scenes=tuple(scene.text for scene in book.scenes), questions=drawn.questions
    )
    (out / "readalong" / "84.json").write_text(reading.model_dump_json(), encoding="utf-8")
    return out


@pytest.fixture(scope="session")
def vlsp_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """MuLD VLSP built from two real theses of the shared corpus."""
    from longread.benchmarks.muld.builders.vlsp import build_vlsp
    from tests.benchmarks.muld.tasks.test_tasks import THESES
    from tests.helpers import copy_theses

    root = tmp_path_factory.mktemp("vlsp")
    out = root / "vlsp.jsonl"
    build_vlsp([copy_theses(root / "src", THESES)], out)
    return out


@pytest.fixture(scope="session")
def qa_data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """MuLD HotpotQA and NarrativeQA built from the samples in the sources' published formats."""
    from longread.benchmarks.muld.builders.hotpotqa import build_hotpotqa
    from longread.benchmarks.muld.builders.narrativeqa import build_narrativeqa, split_path
    from longread.benchmarks.muld.builders.report import LengthFilter
    from tests.benchmarks.muld.builders.test_hotpotqa import QUESTIONS, write_page_pool
    from tests.benchmarks.muld.builders.test_narrativeqa import make_checkout

    root = tmp_path_factory.mktemp("qa")
    hotpot = root / "hotpotqa.jsonl.bz2"
    build_hotpotqa(QUESTIONS, write_page_pool(root / "pages.jsonl"), hotpot, seed=7,
                   length_filter=LengthFilter(min_tokens=7_500))  # fmt: skip
    narrative = root / "narrativeqa.jsonl.bz2"
    build_narrativeqa(make_checkout(root / "nqa"), narrative)
    test_split = split_path(narrative, "test")
    return {
        "muld/hotpotqa": hotpot,
        "muld/narrativeqa": test_split if test_split.exists() else split_path(narrative, "train"),
    }


@pytest.fixture(scope="session")
def style_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three MuLD style-change test documents drawn from Gutenberg novels of the shared corpus."""
    from longread.benchmarks.muld.builders.report import LengthFilter
    from longread.benchmarks.muld.builders.style_change import build_style_change
    from longread.benchmarks.muld.records import read_records
    from tests.benchmarks.muld.builders.test_style_change import BOOKS
    from tests.helpers import gutenberg_book

    root = tmp_path_factory.mktemp("style")
    build_style_change(
        [gutenberg_book(n) for n in BOOKS],
        root / "sc",
        length_filter=LengthFilter(min_tokens=500),
        seed=1,
        documents={"train": 1, "validation": 1, "test": 3},
        test_fraction=0.25,
    )
    (test_file,) = (root / "sc").glob("*test*")
    out = root / "style_change_test.jsonl"
    records = read_records(test_file).records
    out.write_text("".join(json.dumps(record.as_json(), ensure_ascii=False) + "\n" for _, record in records))
    return out


@pytest.fixture(scope="session")
def archetype_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """MuLD character archetype built from scripts and labels in their published formats."""
    from longread.benchmarks.muld.builders.archetype import build_archetype
    from tests.benchmarks.muld.builders.test_archetype import make_sources

    root = tmp_path_factory.mktemp("archetype")
    scripts, labels = make_sources(root / "sources")
    out = root / "character_id.jsonl"
    build_archetype(scripts, labels, out)
    return out


@pytest.fixture(scope="session")
def subtitles_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One MuLD OpenSubtitles film built from an alignment and raw subtitles in their published formats."""
    from longread.benchmarks.muld.builders.opensubtitles import build_opensubtitles
    from longread.benchmarks.muld.builders.report import LengthFilter
    from tests.benchmarks.muld.builders.test_opensubtitles import ALIGNMENT, RAW

    out = tmp_path_factory.mktemp("subtitles") / "opensubtitles.jsonl"
    build_opensubtitles(ALIGNMENT, RAW, out, length_filter=LengthFilter(min_tokens=20))
    return out
