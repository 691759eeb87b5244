"""A real NarrativeXL build: real novels from ../shared, SmolLM2 writing the summaries, spaCy renaming.

One build (6 scenes of one novel, one scene of each of five decoy novels, short
generations) is made once for the module; the tests check the question
invariants on it, the renaming, the layouts, a resumed rebuild from the cache
and byte-identical output for the same seed.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from longread.benchmarks.narrativexl.build import (
    BUILD_REPORT_FILE,
    CACHE_DIR,
    NarrativeXLBuildReport,
    NarrativeXLBuildSettings,
    build_narrativexl,
)
from longread.benchmarks.narrativexl.names import EntityMap
from longread.benchmarks.narrativexl.official import (
    read_hierarchical,
    read_questions_shortform,
    read_tagseparated,
)
from longread.benchmarks.narrativexl.scenes import SceneSettings
from longread.benchmarks.narrativexl.schema import NONE_OF_THE_ABOVE, HierarchicalSummary, ReadingBook
from longread.benchmarks.narrativexl.summaries import SummarySettings
from longread.errors import LongreadError
from tests.models_fixtures import SHARED, tuned

CORPUS = SHARED / "corpus" / "gutenberg"
MAIN = CORPUS / "pg2852.txt.gz"  # The Hound of the Baskervilles
DECOYS = [CORPUS / f"pg{n}.txt.gz" for n in (1342, 84, 120, 105, 174)]
SCENES = 6
SETTINGS = NarrativeXLBuildSettings(
    seed=3,
    max_scenes=SCENES,
    scenes=SceneSettings(chars=1500),  # half the authors' 3,000: every rule holds, each summary reads half
    summaries=SummarySettings(summary_max_tokens=16, distortion_max_tokens=16, hierarchical_max_tokens=16),
)


def _files(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and CACHE_DIR not in path.relative_to(root).parts
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nxl") / "build"
    report = build_narrativexl(
        [MAIN],
        out,
        tuned("smollm2"),
        SETTINGS,
        decoy_sources=DECOYS,
        decoy_max_scenes=1,
        show_progress=False,
    )
    assert [book.role for book in report.books] == ["questions"] + ["decoys only"] * len(DECOYS)
    assert report.generated > 0 and report.cached == 0
    return out


def _from_cache(
    built: Path,
    out: Path,
    sources: list[Path] | None = None,
    settings: NarrativeXLBuildSettings = SETTINGS,
    decoys: list[Path] | None = None,
    **options: Any,
) -> NarrativeXLBuildReport:
    """The module's build made again in ``out`` from its generation cache (other sources, settings or
    options where given)."""
    out.mkdir()
    shutil.copytree(built / CACHE_DIR, out / CACHE_DIR)
    return build_narrativexl(
        [MAIN] if sources is None else sources,
        out,
        tuned("smollm2"),
        settings,
        decoy_sources=DECOYS if decoys is None else decoys,
        decoy_max_scenes=1,
        show_progress=False,
        **options,
    )


def _reading(built: Path) -> ReadingBook:
    return ReadingBook.model_validate_json((built / "readalong" / "2852.json").read_text(encoding="utf-8"))


def test_questions_keep_the_authors_rules_on_a_real_build(built: Path) -> None:
    book = _reading(built)
    assert len(book.scenes) == SCENES
    assert book.questions, "a real build of 6 scenes gives read-along questions"
    kinds = {q.question_type for q in book.questions}
    assert {"lookahead", "change", "otherbook"} <= kinds
    for question in book.questions:
        assert len(question.options) == 6
        texts = [" ".join(option.text.split()).lower() for option in question.options]
        assert len(set(texts)) == len(texts), f"{question.id} shows one text twice"
        assert question.options[-1].text == NONE_OF_THE_ABOVE
        assert question.options[-1].source.kind in ("none", "otherbook", "lookahead", "change")
        answer = question.options[question.answer]
        if question.true_scene is None:
            assert answer.text == NONE_OF_THE_ABOVE and question.retention_demand == question.when_asked
        else:
            assert answer.source.kind == "true" and answer.source.scene == question.true_scene
            assert question.true_scene <= question.when_asked
            assert question.retention_demand == question.when_asked - question.true_scene
        for index, option in enumerate(question.options[:-1]):
            if index == question.answer:
                continue
            source = option.source
            assert source.kind == question.question_type
            if source.kind == "lookahead":
                assert source.book_id == "2852" and source.scene is not None
                assert source.scene > question.when_asked, "a look-ahead decoy is an unread scene"
            elif source.kind == "change":
                assert source.book_id == "2852" and source.scene is not None
                assert source.scene <= question.when_asked, "a change decoy distorts a read scene"
            else:
                assert source.book_id not in (None, "2852"), "an other-book decoy comes from another book"


def test_names_are_replaced_everywhere_and_the_map_is_saved(built: Path) -> None:
    names = EntityMap.load(built / "entity_maps" / "2852.json")
    renamed = [entry for entry in names.entries if entry.original != entry.replacement]
    assert renamed, "The Hound of the Baskervilles has characters to rename"
    book = _reading(built)
    texts = list(book.scenes) + [option.text for q in book.questions for option in q.options]
    with gzip.open(MAIN, "rt", encoding="utf-8-sig") as fh:
        original_text = fh.read()
    checked = 0
    for entry in renamed[:10]:
        if not re.search(rf"\b{re.escape(entry.original)}\b", original_text):
            continue
        pattern = re.compile(rf"\b{re.escape(entry.original)}\b")
        assert not any(pattern.search(text) for text in texts), f"{entry.original!r} left in the build"
        checked += 1
    assert checked >= 3
    # other-book decoys read as if about this book's (renamed) people: their own originals are gone too
    other = EntityMap.load(built / "entity_maps" / "1342.json")
    top_other = [entry.original for entry in other.entries[:5]]
    decoys = [o.text for q in book.questions for o in q.options if o.source.kind == "otherbook"]
    for name in top_other:
        assert not any(re.search(rf"\b{re.escape(name)}\b", text) for text in decoys), name


def test_official_files_agree_with_the_longread_json(built: Path) -> None:
    official = read_questions_shortform(built / "questions" / "2852.questions_shortform")
    book = _reading(built)
    assert official.scenes == tuple(scene.strip() for scene in book.scenes) or official.scenes == book.scenes
    assert [q.answer for q in official.questions] == [q.answer for q in book.questions]
    assert [q.retention_demand for q in official.questions] == [q.retention_demand for q in book.questions]
    summaries = read_tagseparated(built / "books" / "2852.tagseparated")
    assert len(summaries.scenes) == SCENES
    assert {item.status for item in summaries.summaries} <= {"OK", "Warning", "Fail"}
    report = json.loads((built / BUILD_REPORT_FILE).read_text(encoding="utf-8"))
    assert report["books"][0]["book_id"] == "2852"
    # repeated options: redrawn and skipped questions are counted by kind and reason
    assert isinstance(report["books"][0]["redrawn_questions"], dict)
    # the hierarchical summaries as JSON lines: the official file's texts, plus why a merge failed
    official_rows = read_hierarchical(built / "hierarchical" / "2852.tagseparated_hierarch_sum")
    lines = (built / "hierarchical" / "2852.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [HierarchicalSummary.model_validate_json(line) for line in lines]
    assert [(r.level, r.true, r.false) for r in rows] == [(r.level, r.true, r.false) for r in official_rows]
    failed = [r for r in rows if r.merge_failure is not None]
    assert all(r.true == "" and r.level > 0 for r in failed)
    assert len(report["books"][0]["failed_merges"]) == len(failed)
    assert any(f"at most {SCENES} scenes" in line for line in report["books"][0]["left_out"])


def test_a_rebuild_from_the_cache_is_byte_identical_and_generates_nothing(
    built: Path, tmp_path: Path
) -> None:
    again = tmp_path / "again"
    report = _from_cache(built, again)
    assert report.generated == 0 and report.cached > 0
    first, second = _files(built), _files(again)
    assert first.keys() == second.keys()
    different = [name for name in first if first[name] != second[name]]
    assert different == [], different  # build_report.json included: a resumed build reports the same
    other_seed = tmp_path / "seed4"
    _from_cache(built, other_seed, settings=SETTINGS.model_copy(update={"seed": 4}))
    third = _files(other_seed)
    assert third["entity_maps/2852.json"] != first["entity_maps/2852.json"]
    assert third["readalong/2852.json"] != first["readalong/2852.json"]


def test_a_book_too_short_is_skipped_and_reported_while_the_rest_is_built(
    built: Path, tmp_path: Path
) -> None:
    from longread.documents.reader import read_book

    # three real chapters cut to 1,500 characters each: a book, but far too little narrative for 10 scenes
    chapters = read_book(DECOYS[0]).chapters[:3]
    short = tmp_path / "short.txt"
    short.write_text(
        "".join(f"CHAPTER {n}\n\n{chapter.text[:1500]}\n\n\n" for n, chapter in enumerate(chapters, 1)),
        encoding="utf-8",
    )
    report = _from_cache(built, tmp_path / "with-short", [short, MAIN])
    assert report.books[0].book_id == "2852"
    assert len(report.skipped_books) == 1
    name, reason = report.skipped_books[0]
    assert "short" in name and "scene" in reason
    assert any("skipped" in line and "short" in line for line in report.summary_lines())
    with pytest.raises(LongreadError, match=r"missing\.txt: no such file"):
        build_narrativexl([tmp_path / "missing.txt"], tmp_path / "none", tuned("smollm2"), SETTINGS)


def test_books_left_out_on_purpose_are_named_with_why_and_leave_no_file(built: Path, tmp_path: Path) -> None:
    out = tmp_path / "without-1342"
    why = "remembered by smollm2 (cloze 0.50; rule cloze>=0.3)"
    report = _from_cache(built, out, exclude=(("1342", why),))
    # the book read for questions, then the decoys' books in the sorted order of their file names
    assert [book.book_id for book in report.books] == ["2852", "105", "120", "174", "84"]
    ((name, reason),) = report.excluded_books
    assert name.endswith("pg1342.txt.gz") and "1342" in reason and why in reason
    assert report.skipped_books == []
    assert not list(out.rglob("1342*")), "a book left out writes nothing"
    stored = json.loads((out / BUILD_REPORT_FILE).read_text(encoding="utf-8"))
    assert stored["excluded_books"] == [{"book": name, "reason": reason}]
    assert any(line.startswith("  left out") and why in line for line in report.summary_lines())
    with pytest.raises(LongreadError, match=r"no readable book.*2852.*left out: remembered"):
        build_narrativexl(
            [MAIN], tmp_path / "none", tuned("smollm2"), SETTINGS, exclude=(("2852", "remembered by x"),)
        )


def test_a_book_given_twice_or_also_as_a_decoy_is_read_once_and_named(built: Path, tmp_path: Path) -> None:
    """The book given twice, and once more among the decoys: the same build as the book given once, with
    both repeats listed as left out (and why) in the report."""
    out = tmp_path / "twice"
    report = _from_cache(built, out, [MAIN, MAIN], decoys=[*DECOYS, MAIN])
    assert report.generated == 0
    assert report.excluded_books == [
        (str(MAIN), "book 2852 left out: this file was read already"),
        (str(MAIN), "book 2852 left out as a decoy: it is among the books"),
    ]
    first, second = _files(built), _files(out)
    assert [name for name in first if first[name] != second.get(name)] == [BUILD_REPORT_FILE]


def test_the_probe_reads_a_build_as_the_scenes_a_model_is_shown(built: Path, tmp_path: Path) -> None:
    """`probe memory --data BUILD`: the scenes as read (names replaced), one piece each; a path that is
    neither built data the probe knows is refused naming what to give."""
    import subprocess
    import sys

    from longread.benchmarks.narrativexl.excerpts import narrativexl_excerpts

    (excerpts,) = narrativexl_excerpts(built)
    assert excerpts.book.id == "2852" and excerpts.breaks == ()
    assert tuple(c.text for c in excerpts.book.chapters) == _reading(built).scenes
    out = tmp_path / "probe"
    command = [sys.executable, "-m", "longread.cli", "probe", "memory", "--data", str(built), "--model",
               "smollm2", "--out", str(out), "--probes", "min-k", "--passages", "2", "--quiet"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert len(lines) == 2 and {line["book"] for line in lines} == {"2852"}
    scenes = [" ".join(scene.split()) for scene in _reading(built).scenes]  # passages: single spaces
    assert all(any(line["passage"][:40] in scene for scene in scenes) for line in lines)
    command[command.index("--data") + 1] = str(tmp_path)
    refused = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert refused.returncode != 0 and "not built data the probe reads" in " ".join(refused.stderr.split())
