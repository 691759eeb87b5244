"""NarrativeXL evaluation tasks through the generic runner: read-along questions and scene summaries.

Books are real (Pride and Prejudice, Frankenstein from the shared corpus); the
options are real sentences of them. Runner-level behaviour (order, resume,
options-only, the log-likelihood fallback) is driven by scripted backends; the
models' own numbers by SmolLM2 and a tiny random model.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
from pathlib import Path

import pytest

from longread.benchmarks.narrativexl.load import load_book_summaries, load_reading_books
from longread.benchmarks.narrativexl.official import write_reading_book, write_tagseparated
from longread.benchmarks.narrativexl.schema import (
    NONE_OF_THE_ABOVE,
    BookSummaries,
    Option,
    OptionSource,
    ReadAlongQuestion,
    ReadingBook,
    Scene,
    SceneSummaries,
)
from longread.benchmarks.narrativexl.summaries_task import SummariesSettings, SummariesTask
from longread.benchmarks.narrativexl.task import (
    DEFAULT_PROMPT,
    NarrativeXLRow,
    NarrativeXLSettings,
    NarrativeXLTask,
    parse_answer_number,
)
from longread.errors import BadInputError
from longread.evaluation import RunOptions, make_task, read_typed_rows, run_task
from longread.models.requests import ReadAlongRequest
from tests.fake_backends import ScriptedLM, ScriptedReader
from tests.models_fixtures import SHARED, tuned
from tests.tolerances import summed_logprob_tolerance

FRANKENSTEIN = SHARED / "corpus" / "gutenberg" / "pg84.txt.gz"
PRIDE = SHARED / "corpus" / "gutenberg" / "pg1342.txt.gz"
pytestmark = pytest.mark.skipif(not FRANKENSTEIN.is_file() or not PRIDE.is_file(), reason="corpus missing")


@functools.cache
def _scenes(path: Path, opening: str, n: int, size: int) -> tuple[str, ...]:
    with gzip.open(path, "rb") as fh:
        text = fh.read().decode("utf-8-sig").replace("\r\n", "\n")
    start = text.index(opening)
    scenes: list[str] = []
    while len(scenes) < n:
        end = text.index(". ", start + size) + 1
        scenes.append(re.sub(r"\s+", " ", text[start:end]).strip())
        start = end
    return tuple(scenes)


def _sentence(scene: str, last: bool = False) -> str:
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", scene) if len(s.split()) >= 5]
    return sentences[-1] if last else sentences[0]


def _book(book_id: str, path: Path, opening: str, other: tuple[str, ...], n: int = 5) -> ReadingBook:
    """Questions after scenes 1..n-2: the true option a sentence of a read scene, decoys from later scenes,
    another book and 'None of the above.' (the answer of every third question)."""
    scenes = _scenes(path, opening, n, 250)
    questions = []
    for when in range(1, n - 1):
        none = when % 3 == 0
        true = Option(
            text=_sentence(scenes[when - 1]),
            source=OptionSource(kind="true", book_id=book_id, scene=when - 1),
        )
        decoys = [
            Option(
                text=_sentence(scenes[when + 1], last=True),
                source=OptionSource(kind="lookahead", scene=when + 1),
            ),
            Option(text=_sentence(other[when]), source=OptionSource(kind="otherbook")),
        ]
        if none:  # as the authors: one more decoy in the true option's place, so always n options
            decoys.append(
                Option(text=_sentence(other[when], last=True), source=OptionSource(kind="otherbook"))
            )
        options = [*decoys, Option(text=NONE_OF_THE_ABOVE, source=OptionSource(kind="none"))]
        if not none:
            options.insert(when % 2, true)
        answer = len(options) - 1 if none else when % 2
        questions.append(
            ReadAlongQuestion(
                id=f"{book_id}/{when}/lookahead",
                book_id=book_id,
                when_asked=when,
                question_type="lookahead",
                options=tuple(options),
                answer=answer,
                retention_demand=when if none else 1,
                true_scene=None if none else when - 1,
            )
        )
    return ReadingBook(book_id=book_id, scenes=scenes, questions=tuple(reversed(questions)))


def _books() -> list[ReadingBook]:
    frank = _scenes(FRANKENSTEIN, "You will rejoice to hear", 5, 250)
    pride = _scenes(PRIDE, "It is a truth universally acknowledged", 5, 250)
    return [
        _book("pride", PRIDE, "It is a truth universally acknowledged", frank),
        _book("frankenstein", FRANKENSTEIN, "You will rejoice to hear", pride),
    ]


@pytest.fixture
def build_dir(tmp_path: Path) -> Path:
    out = tmp_path / "build"
    (out / "readalong").mkdir(parents=True)
    for book in _books():
        (out / "readalong" / f"{book.book_id}.json").write_text(book.model_dump_json(), encoding="utf-8")
    return out


def quiet(**kwargs: object) -> RunOptions:
    return RunOptions(show_progress=False, **kwargs)  # type: ignore[arg-type]


def _true_wins(held: str, option: str) -> float:
    """Options whose words were read score high; the rest low (a 'model' with perfect recall)."""
    seen = set(held.split())
    words = option.split()
    return sum(1.0 if word in seen else -1.0 for word in words) / max(1, len(words)) * len(words)


# ---------------------------------------------------------------- loading


def test_loads_a_build_directory_and_official_files(build_dir: Path, tmp_path: Path) -> None:
    books = load_reading_books(build_dir)
    assert [b.book_id for b in books] == ["frankenstein", "pride"]
    official = tmp_path / "official"
    official.mkdir()
    for book in books:
        write_reading_book(book, official / f"{book.book_id}.questions_shortform")
    again = load_reading_books(official)
    assert [b.scenes for b in again] == [b.scenes for b in books]
    assert [[q.options[q.answer].text for q in b.questions] for b in again] == [
        [q.options[q.answer].text for q in sorted(b.questions, key=lambda q: q.when_asked)] for b in books
    ]
    one = load_reading_books([official / "pride.questions_shortform"])
    assert [b.book_id for b in one] == ["pride"]


def test_malformed_input_names_the_file(build_dir: Path) -> None:
    bad = build_dir / "readalong" / "pride.json"
    bad.write_text('{"book_id": "pride", "scenes": "not a list"}', encoding="utf-8")
    with pytest.raises(BadInputError, match=r"pride\.json.*ReadingBook"):
        load_reading_books(build_dir)
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(BadInputError, match=r"pride\.json.*JSON"):
        load_reading_books(build_dir)


def test_a_json_lines_file_holds_one_book_a_line_and_a_bad_line_is_named(tmp_path: Path) -> None:
    books = _books()
    lines = tmp_path / "books.jsonl"
    lines.write_text("".join(book.model_dump_json() + "\n" for book in books), encoding="utf-8")
    assert load_reading_books(lines) == sorted(books, key=lambda b: b.book_id)
    lines.write_text(books[0].model_dump_json() + "\n" + '{"book_id": "x"}\n', encoding="utf-8")
    with pytest.raises(BadInputError, match=r"books\.jsonl.*line 2 is not a ReadingBook"):
        load_reading_books(lines)
    lines.write_text(books[0].model_dump_json() + "\n{\n", encoding="utf-8")
    with pytest.raises(BadInputError, match=r"line 2 is not a ReadingBook.*JSON"):
        load_reading_books(lines)
    twice = books[0].model_dump_json() + "\n"
    lines.write_text(twice + twice, encoding="utf-8")
    with pytest.raises(BadInputError, match=r"is also in"):
        load_reading_books(lines)
    lines.write_text("\n", encoding="utf-8")
    with pytest.raises(BadInputError, match=r"no book in it"):
        load_reading_books(lines)


# ---------------------------------------------------------------- the runner, scripted


def test_questions_arrive_in_reading_order_and_rows_say_what_was_read(
    build_dir: Path, tmp_path: Path
) -> None:
    reader = ScriptedReader(score=_true_wins, preferred_batch=2)
    outcome = run_task(NarrativeXLTask(), build_dir, reader, tmp_path / "run", quiet())
    assert outcome.request_kind == "read_along" and not outcome.errors
    read = [(book, scenes) for book in ("frankenstein", "pride") for scenes in (2, 3, 4)]
    assert reader.asked == read
    assert reader.restarts == 2  # once per book: the session reads on between questions
    rows = read_typed_rows(tmp_path / "run", NarrativeXLRow)
    assert len(rows) == 6
    for row in rows:
        assert row.scenes_read == row.when_asked + 1
        assert row.option_kinds[row.answer] == ("none" if row.none_is_answer else "true")
        assert row.prediction == (row.prediction_mean if row.scoring == "mean" else row.prediction_sum)
        assert row.correct == row.correct_mean
    assert sum(row.correct for row in rows) >= 4  # perfect recall finds the read sentence
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["chance"] == pytest.approx(1 / 4)
    assert results["x_axis"]["field"] == "retention_bucket"
    assert {"accuracy", "accuracy_mean", "accuracy_sum"} <= set(results["overall"]["metrics"])


def test_resume_asks_only_what_is_left_and_gives_the_same_results(build_dir: Path, tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    run_task(NarrativeXLTask(), build_dir, ScriptedReader(score=_true_wins), whole, quiet())
    part = tmp_path / "part"
    run_task(NarrativeXLTask(), build_dir, ScriptedReader(score=_true_wins), part, quiet(limit=1))
    reader = ScriptedReader(score=_true_wins)
    run_task(NarrativeXLTask(), build_dir, reader, part, quiet(resume=True))
    assert reader.asked == [("pride", 2), ("pride", 3), ("pride", 4)]
    assert (whole / "results.json").read_bytes() == (part / "results.json").read_bytes()


def test_options_only_reads_no_book(build_dir: Path, tmp_path: Path) -> None:
    reader = ScriptedReader(score=_true_wins)
    task = make_task("narrativexl", {"options_only": "true"})
    run_task(task, build_dir, reader, tmp_path / "blind", quiet())
    assert {scenes for _, scenes in reader.asked} == {0}
    rows = read_typed_rows(tmp_path / "blind", NarrativeXLRow)
    assert all(row.book_tokens == 0 and row.scenes_read == 0 for row in rows)
    request = task.request(task.samples(load_reading_books(build_dir)[0])[0], "read_along")
    assert isinstance(request, ReadAlongRequest) and request.prompt.startswith("Question:")


def test_a_model_without_read_along_gets_the_book_cut_from_the_left(build_dir: Path, tmp_path: Path) -> None:
    lm = ScriptedLM(score=_true_wins)
    task = NarrativeXLTask(NarrativeXLSettings(window=60, scoring="sum"))
    outcome = run_task(task, build_dir, lm, tmp_path / "ll", quiet())
    assert outcome.request_kind == "loglikelihood"
    rows = read_typed_rows(tmp_path / "ll", NarrativeXLRow)
    assert all(row.policy == "cut-left(window=60)" and row.tokens_seen <= 60 for row in rows)
    assert any(row.window_start > 0 for row in rows)
    assert all(row.prediction == row.prediction_sum for row in rows)


def test_generate_mode_reads_the_number() -> None:
    assert parse_answer_number(" 3) The", 6) == 2
    assert parse_answer_number(" none", 6) is None
    assert parse_answer_number(" 7", 6) is None
    book = _books()[0]
    task = NarrativeXLTask(NarrativeXLSettings(answer_mode="generate"))
    request = task.request(task.samples(book)[0], "read_along")
    assert isinstance(request, ReadAlongRequest)
    assert request.options == () and request.generate_tokens == 4
    assert "Which of the following scenes was in the book?\n1) " in request.prompt
    assert request.prompt.endswith(f"4) {NONE_OF_THE_ABOVE}\nAnswer:")


# ---------------------------------------------------------------- real models


def test_a_tiny_random_model_runs_the_task_end_to_end(build_dir: Path, tmp_path: Path) -> None:
    model = tuned("random:llama")
    outcome = run_task(
        NarrativeXLTask(NarrativeXLSettings(window=64, stride=16)), build_dir, model, tmp_path / "r", quiet()
    )
    assert outcome.request_kind == "read_along" and not outcome.errors
    rows = read_typed_rows(tmp_path / "r", NarrativeXLRow)
    assert len(rows) == 6
    assert all(
        row.policy == "sliding(window=64,stride=16)" and row.book_tokens - row.window_start <= 64
        for row in rows
    )
    assert max(row.rereads for row in rows) >= 1


def test_smollm2_rows_match_the_engine_and_resume(build_dir: Path, tmp_path: Path) -> None:
    model = tuned("smollm2")
    task = NarrativeXLTask()
    run_task(task, build_dir, model, tmp_path / "s", quiet(limit=1))
    rows = read_typed_rows(tmp_path / "s", NarrativeXLRow)
    book = load_reading_books(build_dir)[0]
    last = task.samples(book)[-1]  # the book read to its last question, from scratch
    direct = tuned("smollm2").read_along([task.request(last, "read_along")])[0]  # type: ignore[list-item]
    row = next(row for row in rows if row.key == last.key)
    for logprob, score in zip(row.option_logprobs, direct.scores, strict=True):
        assert logprob == pytest.approx(score.logprob, abs=summed_logprob_tolerance(score.n_tokens))
    assert row.tokens_seen == direct.tokens_seen and row.window_start == 0
    assert [r.when_asked for r in rows] == sorted(r.when_asked for r in rows)  # appended in reading order
    first = (tmp_path / "s" / "samples.jsonl").read_bytes()
    run_task(task, build_dir, model, tmp_path / "s", quiet(limit=1, resume=True))
    assert (tmp_path / "s" / "samples.jsonl").read_bytes() == first


# ---------------------------------------------------------------- scene summaries


def _summaries_book() -> BookSummaries:
    """Real scenes; 'true summary' = the scene's first sentence, distorted = other scenes' sentences."""
    scenes = _scenes(PRIDE, "It is a truth universally acknowledged", 4, 250)
    built = [Scene(index=i, text=t, overlapped=t, char_start=0) for i, t in enumerate(scenes)]
    summaries = []
    for i, text in enumerate(scenes):
        others = [_sentence(scenes[(i + k) % 4], last=True) for k in (1, 2)]
        if i == 2:
            summaries.append(
                SceneSummaries(index=i, summary=None, status="Fail", comment="Complete failure.")
            )
        else:
            summaries.append(SceneSummaries(index=i, summary=_sentence(text), distorted=tuple(others)))
    return BookSummaries(book_id="pride", scenes=tuple(built), summaries=tuple(summaries))


def test_summaries_task_skips_failed_scenes_and_reports_chance(tmp_path: Path) -> None:
    book = _summaries_book()
    write_tagseparated(book, tmp_path / "pride.tagseparated")
    assert load_book_summaries(tmp_path / "pride.tagseparated")[0].book_id == "pride"
    task = SummariesTask()
    outcome = run_task(
        task, tmp_path / "pride.tagseparated", ScriptedLM(score=_true_wins), tmp_path / "run", quiet()
    )
    assert not outcome.errors
    results = outcome.results
    assert results["counts"]["samples"] == 3 and results["chance"] == pytest.approx(1 / 3)
    assert (
        results["notes"]["skipped_scenes"].startswith("1 scenes")
        and "pride: 2" in results["notes"]["skipped_scenes"]
    )
    blind = SummariesTask(SummariesSettings(options_only=True))
    request = blind.request(blind.samples(book)[0], "loglikelihood")
    assert request.context == "A summary of the scene above:"


def test_summaries_task_on_smollm2(tmp_path: Path) -> None:
    path = tmp_path / "pride.json"
    path.write_text(_summaries_book().model_dump_json(), encoding="utf-8")
    outcome = run_task(SummariesTask(), path, tuned("smollm2"), tmp_path / "run", quiet())
    assert not outcome.errors and outcome.results["counts"]["samples"] == 3
    accuracy = outcome.results["overall"]["metrics"]["accuracy"]
    assert accuracy["n"] == 3 and accuracy["ci_low"] <= accuracy["value"] <= accuracy["ci_high"]


def test_retention_buckets_double_and_sort_in_numeric_order() -> None:
    from longread.benchmarks.narrativexl.task import retention_bucket
    from longread.metrics import group_sort_key

    labels = [retention_bucket(d) for d in (0, 1, 2, 3, 4, 7, 8, 15, 16, 150)]
    assert labels == ["0", "1", "2–3", "2–3", "4–7", "4–7", "8–15", "8–15", "16–31", "128–255"]
    shuffled = ["16–31", "2–3", "128–255", "0", "8–15", "1", "4–7"]
    assert sorted(shuffled, key=group_sort_key) == ["0", "1", "2–3", "4–7", "8–15", "16–31", "128–255"]
    with pytest.raises(ValueError):
        retention_bucket(-1)


def test_a_run_killed_inside_a_book_keeps_the_questions_it_answered(build_dir: Path, tmp_path: Path) -> None:
    """A book's questions form one long wave: rows are stored after every backend call, not at its end."""

    class Killed(BaseException):
        pass

    class DiesOnThirdCall(ScriptedReader):
        def read_along(self, requests, progress=None):  # type: ignore[no-untyped-def]
            if len(self.calls) == 2:
                raise Killed
            return super().read_along(requests, progress)

    run = tmp_path / "run"
    with pytest.raises(Killed):
        dying = DiesOnThirdCall(score=_true_wins, preferred_batch=1)
        run_task(NarrativeXLTask(), build_dir, dying, run, quiet())
    kept = read_typed_rows(run, NarrativeXLRow)
    assert [row.scenes_read for row in kept] == [2, 3]  # the first book's first two questions survived
    reader = ScriptedReader(score=_true_wins)
    run_task(NarrativeXLTask(), build_dir, reader, run, quiet(resume=True))
    assert reader.asked[0] == ("frankenstein", 4)
    assert len(read_typed_rows(run, NarrativeXLRow)) == 6


# ---------------------------------------------------------------- the whole window by default


def _measured_room(spec: str, book: ReadingBook) -> int:
    """Start token + the longest prompt and option (last token predicted, not read), tokenised here."""
    tokenizer = tuned(spec).tokenizer
    prompt = DEFAULT_PROMPT.rstrip()
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    longest = max(
        len(tokenizer(prompt + " " + option.text, add_special_tokens=False)["input_ids"]) - len(prompt_ids)
        for question in book.questions
        for option in question.options
    )
    start = 1 if tuned(spec).encoder.start_token_id is not None else 0
    return start + len(prompt_ids) + longest - 1


@pytest.mark.parametrize("spec", ["smollm2", "gemma3"])
def test_the_default_window_is_the_model_length_less_the_questions(spec: str, build_dir: Path) -> None:
    model = tuned(spec)
    task = NarrativeXLTask()
    book = load_reading_books(build_dir)[0]
    sample = task.samples(book)[0]
    result = model.read_along([task.request(sample, "read_along")])[0]  # type: ignore[list-item]
    row = task.row(sample, result, "read_along", reused=False)
    room = _measured_room(spec, book)
    assert row.question_room == room < 200  # a few dozen tokens, not a fixed 1,024
    assert row.window == model.max_length - room
    assert row.policy == f"sliding(window={model.max_length - room},stride={(model.max_length - room) // 2})"


def test_a_window_or_room_given_overrides_the_measured_one(build_dir: Path) -> None:
    model = tuned("smollm2")
    book = load_reading_books(build_dir)[0]
    for settings, window, room in (
        (NarrativeXLSettings(window=300), 300, 0),
        (NarrativeXLSettings(question_room=500), model.max_length - 500, 500),
    ):
        task = NarrativeXLTask(settings)
        sample = task.samples(book)[0]
        result = model.read_along([task.request(sample, "read_along")])[0]  # type: ignore[list-item]
        row = task.row(sample, result, "read_along", reused=False)
        assert (row.window, row.question_room) == (window, room)
