"""Pairing on the instance's full identity, collisions named, and donors that favour no candidate."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book, pool_entries
from longread.benchmarks.chapterbreak.io import load_instances, write_instances
from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.evaluation import RunOptions, run_task
from longread.evaluation.controls import ControlledTask, ControlSettings
from longread.report.load import load_runs
from longread.report.paired import PairingError, paired_differences
from tests.fake_backends import ScriptedLM
from tests.helpers import synthetic_book, write_negative_variants

TASK = ChapterBreakTask(ChapterBreakSettings(prefix_lengths=(32,), suffix_tokens=16))


def _rows(run: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]


def _rewrite(run: Path, change: dict[str, bool]) -> None:
    rows = [{**row, "correct": change.get(str(row["key"]), row["correct"])} for row in _rows(run)]
    (run / "samples.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_a_file_with_two_variants_of_each_boundary_pairs_every_instance_with_itself(tmp_path: Path) -> None:
    inside, outside = write_negative_variants(tmp_path)
    both = tmp_path / "both.jsonl"
    both.write_text(inside.read_text() + outside.read_text())
    first, later = tmp_path / "first", tmp_path / "later"
    run_task(TASK, both, ScriptedLM(), first, RunOptions(show_progress=False))
    run_task(TASK, both, ScriptedLM(), later, RunOptions(show_progress=False))
    rows = _rows(first)
    oob = [str(row["key"]) for row in rows if row["negatives_from"] == "out-of-book"]
    assert len({row["pair_id"] for row in rows}) < len(rows)  # pair ids repeat across the two variants
    _rewrite(first, {str(row["key"]): True for row in rows})
    _rewrite(later, {str(row["key"]): str(row["key"]) not in oob for row in rows})  # only oob rows lost
    (paired,) = paired_differences(load_runs([first, later]), ())
    # every row paired with its own instance: the lost rows are exactly the out-of-book ones
    assert paired.paired == len(rows) and paired.paired_on == "instance"
    assert (paired.only_first, paired.only_later) == (len(oob), 0)
    assert (paired.unmatched_first, paired.unmatched_later) == (0, 0)


def test_two_instances_of_one_pair_id_that_only_pair_ids_could_join_are_refused_by_name(
    tmp_path: Path,
) -> None:
    inside, outside = write_negative_variants(tmp_path)
    both = tmp_path / "both.jsonl"
    both.write_text(inside.read_text() + outside.read_text())
    renamed = [i.model_copy(update={"id": i.id + "-again"}) for i in load_instances(inside)]
    other = tmp_path / "other.jsonl"
    write_instances(renamed, other)
    first, later = tmp_path / "first", tmp_path / "later"
    run_task(TASK, both, ScriptedLM(), first, RunOptions(show_progress=False))
    run_task(TASK, other, ScriptedLM(), later, RunOptions(show_progress=False))
    with pytest.raises(PairingError, match=r"holds two instances of pair id .*chapter-oob.*--group-by"):
        paired_differences(load_runs([first, later]), ())
    # told apart by --group-by, each variant pairs on its pair id
    differences = paired_differences(load_runs([first, later]), ("negatives_from",))
    assert {d.groups for d in differences} == {"in-book"} and differences[0].paired_on == "pair id"


def test_replace_never_borrows_from_a_book_a_negative_comes_from(tmp_path: Path) -> None:
    books = {name: synthetic_book(9, book_id=name) for name in ("a", "b", "c", "d", "e")}
    options = BuildOptions(prefix_tokens=300, suffix_tokens=24, negatives_from="out-of-book")
    instances = []
    for name, book in books.items():  # each book's negatives come from the next book only
        lender = books[chr((ord(name) - ord("a") + 1) % 5 + ord("a"))]
        instances += build_book(book, options, out_of_book_pool=list(pool_entries(lender, options))).instances
    data = tmp_path / "oob.jsonl"
    write_instances(instances, data)
    task = ControlledTask(
        ChapterBreakTask(ChapterBreakSettings(prefix_lengths=(64,))), ControlSettings("replace")
    )
    loaded = task.load(data)
    seen_books: set[str] = set()
    for instance in loaded:
        negatives = {source.book_id for source in instance.negative_sources or []}
        assert negatives and instance.book_id not in negatives
        for sample in task.samples(instance):
            donors = {donor.id.split("/")[1] for donor in task.control_for(sample).donors}
            assert donors and not donors & (negatives | {instance.book_id}), (instance.id, donors)
            seen_books |= donors
    assert len(seen_books) == 5  # every book lends to someone: only the barred ones are left out


def test_replace_never_borrows_from_a_book_a_narrativexl_decoy_comes_from(tmp_path: Path) -> None:
    """A read-along question's other-book decoys come from books of the same data: a donor span from
    one of them could hold the very scene the decoy summarises, read just before the question. Each
    question bars its own options' books (per question, not per book: a book's questions draw decoys
    from different books); a question whose every other book is barred gets no donor and is named."""
    import numpy as np

    from longread.benchmarks.narrativexl.questions import make_readalong_questions
    from longread.benchmarks.narrativexl.schema import ReadingBook
    from longread.benchmarks.narrativexl.task import NarrativeXLTask
    from longread.models.requests.control import NoDonorError, apply_control
    from tests.benchmarks.narrativexl.books import OTHER_BOOKS, make_book

    def build(folder: Path, main_books: tuple[int, ...]) -> Path:
        folder.mkdir()
        for main in main_books:
            summaries = make_book(main, 6)
            others = [make_book(g, 5) for g in main_books if g != main][:4]  # every decoy from the data
            questions = make_readalong_questions(summaries, others, np.random.default_rng(main)).questions
            scenes = tuple(scene.text for scene in summaries.scenes)
            book = ReadingBook(book_id=summaries.book_id, scenes=scenes, questions=questions)
            (folder / f"{book.book_id}.json").write_text(book.model_dump_json(), encoding="utf-8")
        return folder

    task = ControlledTask(NarrativeXLTask(), ControlSettings("replace", 32))
    otherbook = lenders = 0
    barred_somewhere: set[str] = set()
    donors_seen: set[str] = set()
    for reading in task.load(build(tmp_path / "seven", (84, *OTHER_BOOKS))):
        for sample in task.samples(reading):
            question = next(q for q in reading.questions if q.id == sample.key)
            options = {option.source.book_id for option in question.options} - {None}
            donors = {donor.id for donor in task.control_for(sample).donors}
            assert donors and not donors & {*options, reading.book_id}, (sample.key, donors, options)
            if question.question_type == "otherbook":
                otherbook += 1
                assert len(options) == 5 and len(donors) == 7 - 5
                barred_somewhere |= options - {reading.book_id}
            donors_seen |= donors
            lenders += len(donors)
    assert otherbook > 0 and lenders > 0
    assert barred_somewhere & donors_seen  # barred for one question, a lender to another

    task = ControlledTask(NarrativeXLTask(), ControlSettings("replace", 32))
    for reading in task.load(build(tmp_path / "five", (84, *OTHER_BOOKS[:4]))):
        for sample in task.samples(reading):
            question = next(q for q in reading.questions if q.id == sample.key)
            if question.question_type != "otherbook":
                continue
            control = task.control_for(sample)
            assert control.donors == ()  # the other four books all lend it a decoy
            with pytest.raises(NoDonorError, match=rf"sample {re.escape(repr(sample.key))}: `replace` needs"):
                apply_control(list(range(100)), control, start_tokens=0, encode_plain=lambda text: [1] * 50)
