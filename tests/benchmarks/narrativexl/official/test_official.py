"""The authors' NarrativeXL files: written as their code writes them, read back without conversion."""

from __future__ import annotations

import hashlib
import json
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from longread.benchmarks.narrativexl.official import (
    COLUMN_SEPARATOR,
    LINE_SEPARATOR,
    SUMMARY_SEPARATOR,
    OfficialFormatError,
    book_id_from_path,
    canonical_book,
    decode_official,
    detect_official_kind,
    group_for_next_level,
    hierarchical_text,
    question_string,
    read_hierarchical,
    read_questions_shortform,
    read_tagseparated,
    reading_book_scenes,
    write_hierarchical,
    write_questions_shortform,
    write_reading_book,
    write_tagseparated,
)
from longread.benchmarks.narrativexl.questions import make_readalong_questions
from longread.benchmarks.narrativexl.schema import (
    BookSummaries,
    HierarchicalSummary,
    ReadAlongQuestion,
    Scene,
    SceneSummaries,
)
from longread.errors import BadInputError
from tests.benchmarks.narrativexl.books import fake_merge, hierarchy_book, main_book, other_books
from tests.helpers import TEST_DATA, needs_shared

pytestmark = needs_shared
REFERENCE = json.loads((TEST_DATA / "narrativexl" / "authors_reference.json").read_text(encoding="utf-8"))


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@cache
def book() -> BookSummaries:
    return main_book()


@cache
def questions() -> tuple[ReadAlongQuestion, ...]:
    return make_readalong_questions(book(), other_books(), np.random.default_rng(5)).questions


# ---- the authors' writers, transcribed from their code (Dataloaders.py, QuestionGeneration.py,
# ---- CreateHiararchicalSummariesTrueOnly.py at the commit in authors_reference.json)


def authors_save_summary_data(
    file_path: Path,
    book_chunks: list[str],
    overlapped_book_chunks: list[str],
    book_chunk_summaries: list[str | None],
    false_book_chunk_summaries: list[list[str] | None],
    failed_summaries: dict[int, str],
) -> None:
    """``BookProcessor.save_summary_data``."""
    columns = [
        "ChunkInd",
        "BookChunks",
        "OverlappedBookChunks",
        "Summaries",
        "FakeSummaries",
        "Failure",
        "Comment",
    ]
    book_chunks_tmp = book_chunks[: len(overlapped_book_chunks)]
    with open(file_path, "w") as f:
        f.write(COLUMN_SEPARATOR.join(columns))
        f.write(LINE_SEPARATOR)
        for i, (chunk, ochunk, sum_, fakesums) in enumerate(
            zip(  # noqa: B905  # as the authors zip
                book_chunks_tmp, overlapped_book_chunks, book_chunk_summaries, false_book_chunk_summaries
            )
        ):
            chunk, ochunk, sum_ = [el.strip() if el else el for el in (chunk, ochunk, sum_)]  # type: ignore[assignment]
            fakesums = [el.strip() for el in fakesums] if fakesums else fakesums
            if i in failed_summaries:
                if failed_summaries[i] == "Complete failure.":
                    f.write(
                        COLUMN_SEPARATOR.join([str(i), chunk, ochunk, "", "", "Fail", failed_summaries[i]])
                    )
                else:
                    joined = SUMMARY_SEPARATOR.join([str(fs) for fs in fakesums if fs]) if fakesums else ""
                    f.write(
                        COLUMN_SEPARATOR.join(
                            [str(i), chunk, ochunk, sum_ or "", joined, "Warning", failed_summaries[i]]
                        )
                    )
            else:
                joined = SUMMARY_SEPARATOR.join([str(fs) for fs in fakesums or [] if fs])
                f.write(COLUMN_SEPARATOR.join([str(i), chunk, ochunk, sum_ or "", joined, "OK", ""]))
            f.write(LINE_SEPARATOR)


def authors_write_shortform(
    savepath: Path, chunks: list[str], ochunks: list[str], asked: list[list[Any]]
) -> None:
    """The shortform writer of ``generate_questions``; ``asked[i]``: (question text, answer, type, delay)."""
    with open(savepath, "w") as f:
        f.write(
            COLUMN_SEPARATOR.join(
                [
                    "WHEN_ASKED",
                    "RAW_CHUNK",
                    "OVERLAPPED_CHUNK",
                    "QUESTIONS",
                    "QUESTION_ANSWERS",
                    "QUESTION_TYPES",
                    "MEMLOADS",
                ]
            )
        )
        f.write(LINE_SEPARATOR)
        for chunkind, qs in enumerate(asked):
            question_texts = SUMMARY_SEPARATOR.join([q[0] for q in qs])
            question_answers = SUMMARY_SEPARATOR.join([q[1] for q in qs])
            question_types = SUMMARY_SEPARATOR.join([q[2] for q in qs])
            memloads = SUMMARY_SEPARATOR.join([str(q[3]) for q in qs])
            f.write(
                COLUMN_SEPARATOR.join(
                    [
                        str(chunkind),
                        chunks[chunkind],
                        ochunks[chunkind],
                        question_texts,
                        question_answers,
                        question_types,
                        memloads,
                    ]
                )
            )
            f.write(LINE_SEPARATOR)


def authors_save_hierarch_summaries(
    savepath: Path, true_summaries: list[str], false_summaries: list[str], levels: list[int]
) -> None:
    """``save_hierarch_summaries``."""
    with open(savepath, "w") as f:
        f.write(COLUMN_SEPARATOR.join(["TRUE_SUMMARY", "FALSE_SUMMARY", "LEVEL"]))
        f.write(LINE_SEPARATOR)
        for true_sum, false_sum, level in zip(true_summaries, false_summaries, levels):  # noqa: B905  # as the authors zip
            f.write(COLUMN_SEPARATOR.join([true_sum, false_sum, str(level)]))
            f.write(LINE_SEPARATOR)


def authors_fields(b: BookSummaries) -> dict[str, Any]:
    """A book as the authors' BookProcessor holds it (messy whitespace kept: their writer strips it)."""
    return {
        "book_chunks": ["  " + s.text + "\n" for s in b.scenes],
        "overlapped_book_chunks": [s.overlapped + " " for s in b.scenes],
        "book_chunk_summaries": [None if i.summary is None else i.summary + "\n" for i in b.summaries],
        "false_book_chunk_summaries": [[" " + d for d in i.distorted] or None for i in b.summaries],
        "failed_summaries": {k: i.comment for k, i in enumerate(b.summaries) if i.status != "OK"},
    }


# ---- .tagseparated


def test_tagseparated_write_read_is_the_model_and_read_write_the_same_bytes(tmp_path: Path) -> None:
    path = tmp_path / "84.tagseparated"
    write_tagseparated(book(), path)
    back = read_tagseparated(path)
    assert back == book()
    assert back.summaries[7].summary is None and back.summaries[7].status == "Fail"
    assert (
        back.summaries[12].status == "Warning"
        and back.summaries[0].distorted == book().summaries[0].distorted
    )
    again = tmp_path / "again" / "84.tagseparated"
    write_tagseparated(back, again)
    assert again.read_bytes() == path.read_bytes()
    assert path.read_text(encoding="utf-8").endswith(LINE_SEPARATOR)


def test_tagseparated_is_byte_for_byte_what_the_authors_code_writes(tmp_path: Path) -> None:
    for b in [book(), *other_books()]:
        ours = tmp_path / f"{b.book_id}.tagseparated"
        write_tagseparated(b, ours)
        # recorded by running their save_summary_data (tests/data/narrativexl/make_authors_reference.py)
        assert sha(ours) == REFERENCE["tagseparated_sha256"][b.book_id], b.book_id
        theirs = tmp_path / "authors" / f"{b.book_id}.tagseparated"
        theirs.parent.mkdir(exist_ok=True)
        authors_save_summary_data(theirs, **authors_fields(b))
        assert theirs.read_bytes() == ours.read_bytes()
        assert read_tagseparated(theirs) == b


def test_canonical_book_is_what_the_file_keeps(tmp_path: Path) -> None:
    messy = BookSummaries(
        book_id="x",
        scenes=(
            Scene(index=3, text=" One. ", overlapped="One. Two", char_start=99, chapter_index=2),
            Scene(index=4, text="Two.\n", overlapped=" One. Two.", char_start=120),
        ),
        summaries=(
            SceneSummaries(index=3, summary=" s1 ", distorted=(" d1", "", "  "), comment="ignored for OK"),
            SceneSummaries(
                index=4, summary="s2", distorted=("d2",), status="Fail", comment="Complete failure."
            ),
        ),
    )
    path = tmp_path / "x.tagseparated"
    write_tagseparated(messy, path)
    expected = canonical_book(messy)
    assert read_tagseparated(path) == expected
    assert expected.scenes[1].char_start == len("One.") + 1 and expected.scenes[0].chapter_index is None
    assert expected.summaries[0] == SceneSummaries(index=0, summary="s1", distorted=("d1",))
    assert expected.summaries[1].summary is None and expected.summaries[1].distorted == ()


def test_other_encodings_are_read_as_the_authors_loader_reads_them(tmp_path: Path) -> None:
    accented = book().model_copy(
        update={
            "scenes": (book().scenes[0].model_copy(update={"text": "Café — “naïve”"}), *book().scenes[1:])
        }
    )
    for encoding in ("utf-8", "cp1252", "utf-16"):
        path = tmp_path / encoding / "84.tagseparated"
        write_tagseparated(accented, path, encoding=encoding)
        assert decode_official(path).encoding == encoding
        back = read_tagseparated(path)
        assert back.scenes[0].text == "Café — “naïve”"
        again = tmp_path / encoding / "again.tagseparated"
        write_tagseparated(back, again, encoding=encoding)
        assert again.read_bytes() == path.read_bytes()


# ---- .questions_shortform


def test_questions_shortform_write_read_is_the_model_and_read_write_the_same_bytes(tmp_path: Path) -> None:
    path = tmp_path / "84.questions_shortform"
    write_questions_shortform(book().scenes, questions(), path)
    reading = read_questions_shortform(path)
    assert reading.book_id == "84" and reading.source == str(path)
    assert reading.scenes == tuple(s.text for s in book().scenes)
    assert reading.overlapped == tuple(s.overlapped for s in book().scenes)
    assert len(reading.questions) == len(questions())
    for got, made in zip(reading.questions, questions(), strict=True):
        # everything but the decoys' scenes/books, which the published layout does not keep
        assert got.model_dump(exclude={"options"}) == made.model_dump(exclude={"options"})
        assert [o.text for o in got.options] == [o.text for o in made.options]
        assert [o.source.kind for o in got.options] == [o.source.kind for o in made.options]
        assert got.options[got.answer].source == made.options[made.answer].source
    again = tmp_path / "again.questions_shortform"
    write_reading_book(reading, again)
    assert again.read_bytes() == path.read_bytes()
    assert reading_book_scenes(reading)[3].overlapped == book().scenes[3].overlapped


def test_questions_shortform_is_what_the_authors_code_writes(tmp_path: Path) -> None:
    asked: list[list[Any]] = [[] for _ in book().scenes]
    type_names = {"lookahead": "Lookahead", "change": "Change", "otherbook": "Otherbook"}
    for q in questions():
        text = question_string([o.text for o in q.options])
        asked[q.when_asked].append((text, str(q.answer + 1), type_names[q.question_type], q.retention_demand))
    theirs = tmp_path / "authors" / "84.questions_shortform"
    theirs.parent.mkdir()
    authors_write_shortform(
        theirs, [s.text for s in book().scenes], [s.overlapped for s in book().scenes], asked
    )
    ours = tmp_path / "84.questions_shortform"
    write_questions_shortform(book().scenes, questions(), ours)
    assert ours.read_bytes() == theirs.read_bytes()
    reading = read_questions_shortform(theirs)
    assert [q.answer for q in reading.questions] == [q.answer for q in questions()]
    assert [q.true_scene for q in reading.questions] == [q.true_scene for q in questions()]


def test_a_scene_without_questions_and_questions_with_newlines_round_trip(tmp_path: Path) -> None:
    b = book()
    q = questions()[0]
    odd = q.model_copy(
        update={
            "options": (
                q.options[0].model_copy(update={"text": "line one\n2) not an option"}),
                *q.options[1:],
            )
        }
    )
    path = tmp_path / "84.questions_shortform"
    write_questions_shortform(b.scenes[:3], [odd], path)
    again = tmp_path / "again.questions_shortform"
    write_reading_book(read_questions_shortform(path), again)
    assert again.read_bytes() == path.read_bytes()
    with pytest.raises(ValueError, match="asked after scene 5"):
        write_questions_shortform(
            b.scenes[:3], [q.model_copy(update={"when_asked": 5})], tmp_path / "bad.questions_shortform"
        )


# ---- hierarchical summaries


def hierarchy_items() -> list[HierarchicalSummary]:
    """Great Expectations' summaries merged level by level with the authors' grouping and ``fake_merge``."""
    hb = hierarchy_book()
    chosen = REFERENCE["hierarchical"]["level0_false_choice"]
    level0 = [item.summary or "" for item in hb.summaries]
    items = [
        HierarchicalSummary(
            level=0,
            index=i,
            true=text,
            false=None if k is None else hb.summaries[i].distorted[k],
            first_scene=i,
            last_scene=i,
        )
        for i, (text, k) in enumerate(zip(level0, chosen, strict=True))
    ]
    current = items
    level = 1
    while len(current) > 1:
        groups = group_for_next_level([item.true for item in current])
        merged = []
        for index, group in enumerate(groups):
            lines = "".join(f"Summary {j}: {current[j].true}\n" for j in group)
            merged.append(
                HierarchicalSummary(
                    level=level,
                    index=index,
                    true=fake_merge(lines),
                    first_scene=current[group[0]].first_scene,
                    last_scene=current[group[-1]].last_scene,
                )
            )
        items.extend(merged)
        current = merged
        level += 1
    return items


def test_hierarchical_is_byte_for_byte_what_the_authors_code_writes(tmp_path: Path) -> None:
    items = hierarchy_items()
    assert [item.level for item in items] == REFERENCE["hierarchical"]["levels"]
    path = tmp_path / "1400.tagseparated_hierarch_sum"
    write_hierarchical(items, path)
    assert sha(path) == REFERENCE["hierarchical"]["sha256"]
    back = read_hierarchical(path)
    assert back == items
    assert [(i.first_scene, i.last_scene) for i in back if i.level == 1] == [(0, 27), (28, 44)]
    assert back[-1].true.startswith("Events of summaries 0-1:") and back[-1].false is None
    theirs = tmp_path / "authors.tagseparated_hierarch_sum"
    authors_save_hierarch_summaries(
        theirs,
        [i.true for i in items],
        ["None" if i.false is None else i.false for i in items],
        [i.level for i in items],
    )
    assert theirs.read_bytes() == path.read_bytes()
    again = tmp_path / "again.tagseparated_hierarch_sum"
    write_hierarchical(read_hierarchical(theirs), again)
    assert again.read_bytes() == theirs.read_bytes()


def test_hierarchical_ranges_stay_unknown_when_the_grouping_does_not_fit(tmp_path: Path) -> None:
    items = [item for item in hierarchy_items() if item.level != 2]
    items = items[:-1]  # level 1 lost a merged summary (the authors' merge can fail)
    path = tmp_path / "1400.tagseparated_hierarch_sum"
    write_hierarchical(items, path)
    back = read_hierarchical(path)
    assert back[-1].level == 1 and back[-1].first_scene is None
    assert read_hierarchical(path, infer_ranges=False)[0].first_scene is None
    assert hierarchical_text(back) == path.read_text(encoding="utf-8")


# ---- kinds and malformed files


def test_kind_is_told_by_suffix_and_by_header(tmp_path: Path) -> None:
    tag, qs, hier = (
        tmp_path / "84.tagseparated",
        tmp_path / "84.questions_shortform",
        tmp_path / "84.tagseparated_hierarch_sum",
    )
    write_tagseparated(book(), tag)
    write_questions_shortform(book().scenes, questions(), qs)
    write_hierarchical(hierarchy_items(), hier)
    assert [detect_official_kind(p) for p in (tag, qs, hier)] == [
        "tagseparated",
        "questions_shortform",
        "hierarchical",
    ]
    for source, kind in ((tag, "tagseparated"), (qs, "questions_shortform"), (hier, "hierarchical")):
        renamed = tmp_path / f"renamed_{kind}.txt"
        shutil.copy(source, renamed)
        assert detect_official_kind(renamed) == kind
    assert (
        book_id_from_path(hier) == "84"
        and book_id_from_path(tmp_path / "2960.questions_shortform.gz") == "2960"
    )
    plain = tmp_path / "plain.txt"
    plain.write_text("hello", encoding="utf-8")
    with pytest.raises(OfficialFormatError, match="no known suffix"):
        detect_official_kind(plain)


def _damaged(tmp_path: Path, name: str, row: int, change: Any) -> Path:
    """A copy of an official file whose data row ``row`` (1 = header) is changed by ``change``."""
    source = tmp_path / name
    if name.endswith(".tagseparated"):
        write_tagseparated(book(), source)
    else:
        write_questions_shortform(book().scenes, questions(), source)
    rows = source.read_text(encoding="utf-8").split(LINE_SEPARATOR)
    rows[row - 1] = change(rows[row - 1])
    bad = tmp_path / "bad" / name
    bad.parent.mkdir(exist_ok=True)
    bad.write_text(LINE_SEPARATOR.join(rows), encoding="utf-8")
    return bad


def edit_cell(column: int, change: Any) -> Any:
    """A row edit that changes one cell; for a multi-entry cell ``change`` gets the list of entries."""

    def edit(row: str) -> str:
        cells = row.split(COLUMN_SEPARATOR)
        entries = cells[column].split(SUMMARY_SEPARATOR)
        changed = change(entries)
        cells[column] = SUMMARY_SEPARATOR.join(changed) if isinstance(changed, list) else changed
        return COLUMN_SEPARATOR.join(cells)

    return edit


@pytest.mark.parametrize(
    ("name", "row", "change", "message"),
    [
        (
            "84.tagseparated",
            4,
            lambda r: r.replace(COLUMN_SEPARATOR, " ", 1),
            r"row 4\): 6 columns where the tagseparated layout has 7",
        ),
        ("84.tagseparated", 3, edit_cell(0, lambda e: "one"), r"row 3\): ChunkInd is 'one', not an integer"),
        ("84.tagseparated", 5, edit_cell(0, lambda e: "9"), r"row 5\): ChunkInd is 9 where 3 comes next"),
        ("84.tagseparated", 2, edit_cell(5, lambda e: "Good"), r"row 2\): Failure is 'Good'"),
        ("84.tagseparated", 1, lambda r: r.replace("Summaries", "Sums", 1), r"row 1\): the header row is"),
        (
            "84.questions_shortform",
            3,
            edit_cell(4, lambda e: ["7", *e[1:]]),
            r"row 3\): question 1: answer 7 is out of range 1..6",
        ),
        (
            "84.questions_shortform",
            3,
            edit_cell(4, lambda e: ["0", *e[1:]]),
            r"row 3\): question 1: answer 0 is out of range 1..6",
        ),
        (
            "84.questions_shortform",
            2,
            edit_cell(4, lambda e: ["two", *e[1:]]),
            r"row 2\): question 1 QUESTION_ANSWERS is 'two', not an integer",
        ),
        (
            "84.questions_shortform",
            2,
            lambda r: r.replace("Which of the following", "Which of these", 1),
            r"row 2\): question 1: the text is not",
        ),
        (
            "84.questions_shortform",
            2,
            lambda r: r.replace("\n2) ", "\n3) ", 1),
            r"row 2\): question 1: the text is not",
        ),
        (
            "84.questions_shortform",
            4,
            edit_cell(5, lambda e: ["mixed", *e[1:]]),
            r"row 4\): question 1: QUESTION_TYPES entry 'mixed'",
        ),
        (
            "84.questions_shortform",
            4,
            edit_cell(6, lambda e: e[:-1]),
            r"row 4\): QUESTIONS, QUESTION_ANSWERS, QUESTION_TYPES and MEMLOADS hold 3/3/3/2",
        ),
        (
            "84.questions_shortform",
            5,
            edit_cell(6, lambda e: ["99", *e[1:]]),
            r"row 5\): question 1: MEMLOADS 99 puts the true scene at -96",
        ),
        (
            "84.questions_shortform",
            3,
            edit_cell(0, lambda e: "x1"),
            r"row 3\): WHEN_ASKED is 'x1', not an integer",
        ),
    ],
)
def test_a_malformed_file_names_file_book_and_row(
    tmp_path: Path, name: str, row: int, change: Any, message: str
) -> None:
    bad = _damaged(tmp_path, name, row, change)
    reader = read_tagseparated if name.endswith(".tagseparated") else read_questions_shortform
    with pytest.raises(OfficialFormatError, match=message) as caught:
        reader(bad)
    assert str(bad) in str(caught.value) and "book 84" in str(caught.value)
    assert isinstance(caught.value, BadInputError) and " — " in str(caught.value)  # says what to do


def test_a_file_without_line_separators_is_named(tmp_path: Path) -> None:
    path = tmp_path / "84.tagseparated"
    path.write_text(COLUMN_SEPARATOR.join(["ChunkInd", "BookChunks"]) + "\n0, text\n", encoding="utf-8")
    with pytest.raises(OfficialFormatError, match=r"84.tagseparated \(book 84\): no line separator at all"):
        read_tagseparated(path)
    hier = tmp_path / "84.tagseparated_hierarch_sum"
    hier.write_text(
        COLUMN_SEPARATOR.join(["TRUE_SUMMARY", "FALSE_SUMMARY", "LEVEL"])
        + LINE_SEPARATOR
        + COLUMN_SEPARATOR.join(["t", "None", "zero"])
        + LINE_SEPARATOR,
        encoding="utf-8",
    )
    with pytest.raises(OfficialFormatError, match=r"row 2\): LEVEL is 'zero', not an integer"):
        read_hierarchical(hier)
