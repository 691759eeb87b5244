"""The HTML report's sample view of NarrativeXL questions (and MuLD rows): a real run, read back, clicked.

The data is a real read-along book: Frankenstein cut into scenes, its questions drawn by the real
question generator (:func:`make_readalong_questions`) with decoys from four other novels, written as a
build directory writes it (``readalong/<book>.json``). A tiny random GPT-2 reads it with a small
sliding window (so the window cuts the reading) through the runner. The page is opened in headless
Chromium (``tests/report_html_fixtures.py``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from longread.benchmarks.narrativexl.load import load_reading_books
from longread.benchmarks.narrativexl.questions import make_readalong_questions
from longread.benchmarks.narrativexl.schema import ReadingBook
from longread.benchmarks.narrativexl.task import NarrativeXLSettings, NarrativeXLTask
from longread.evaluation import RunOptions, run_task
from longread.models.hf.loading import load_random
from longread.report.html import build_html_report
from longread.report.html.narrativexl import SCENES_SHOWN, scenes_key
from longread.report.html.samples import run_samples
from longread.report.load import load_runs
from tests.benchmarks.narrativexl.books import MAIN_BOOK, OTHER_BOOKS, make_book
from tests.report.html.pages import copy_as_served, open_page, run_rows

TINY = "random:gpt2"
WINDOW, STRIDE = 600, 200
SEPARATOR = "\n\n"


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A build directory with one read-along book of 7 scenes and its generated questions."""
    root = tmp_path_factory.mktemp("nxl_build") / "build"
    summaries = make_book(MAIN_BOOK, 7)
    others = [make_book(g, 5) for g in OTHER_BOOKS[:4]]
    questions = make_readalong_questions(summaries, others, np.random.default_rng(3)).questions
    book = ReadingBook(
        book_id=summaries.book_id,
        scenes=tuple(scene.text for scene in summaries.scenes),
        questions=questions,
        source="pg84",
    )
    (root / "readalong").mkdir(parents=True)
    (root / "readalong" / f"{book.book_id}.json").write_text(
        json.dumps(book.model_dump(mode="json"), ensure_ascii=False), encoding="utf-8"
    )
    return root


@pytest.fixture(scope="module")
def run(build: Path) -> Path:
    """A real run of the runner: random GPT-2 reading along with a 600-token sliding window."""
    from longread.models import load_backend

    out = build.parent / "run"
    settings = NarrativeXLSettings(window=WINDOW, stride=STRIDE)
    outcome = run_task(
        NarrativeXLTask(settings), build, load_backend(TINY), out, RunOptions(show_progress=False)
    )
    assert not outcome.errors
    return out


def _book(build: Path) -> ReadingBook:
    (book,) = load_reading_books(build)
    return book


def _question(book: ReadingBook, question_id: str) -> Any:
    return next(q for q in book.questions if q.id == question_id)


def test_the_view_holds_the_questions_options_and_the_scenes_read(build: Path, run: Path) -> None:
    (report,) = load_runs([run])
    samples = run_samples(report)
    book = _book(build)
    assert (
        "sha256 matches the run" in samples.text_note and "exact (tokenizer random:gpt2)" in samples.text_note
    )
    questions = {row["id"] for row in samples.rows}
    assert len(samples.rows) == len(book.questions) and set(samples.texts) == questions | {scenes_key("84")}
    assert set(samples.texts[scenes_key("84")]["texts"]) == {
        str(i) for q in questions for i in samples.texts[q]["scenes"]
    }
    folded_some = cut_some = False
    for row in samples.rows:
        text, question = samples.texts[row["id"]], _question(book, row["id"])
        assert [o["text"] for o in text["options"]] == [o.text for o in question.options]
        assert [o["kind"] for o in text["options"]] == row["option_kinds"]
        assert text["options"][row["answer"]]["kind"] == ("none" if row["none_is_answer"] else "true")
        read = book.scenes[: row["scenes_read"]]
        store = samples.texts[scenes_key(row["book_id"])]["texts"]
        shown = {index: store[str(index)] for index in text["scenes"]}
        assert all(shown[index] == read[index] for index in shown)
        last = set(range(max(0, len(read) - SCENES_SHOWN), len(read)))
        assert last <= set(shown) and text["folded"] == len(read) - len(shown)
        if question.true_scene is not None:
            assert question.true_scene in shown and text["true_scene"] == question.true_scene
        folded_some |= text["folded"] > 0
        if row["window_start"] == 0:
            assert text["cut"] is None and "held every scene read" in text["cut_note"]
            continue
        cut_some = True
        _assert_exact_cut(row, text["cut"], read)
    assert folded_some and cut_some, "the sampled questions should include late ones the window cut"


def _assert_exact_cut(row: dict[str, Any], cut: dict[str, int], read: tuple[str, ...]) -> None:
    """The text from the cut on, tokenised as the model read it, is exactly the held tokens."""
    tokenizer = load_random("gpt2").tokenizer
    encode = lambda text: tokenizer.encode(text, add_special_tokens=False)  # noqa: E731
    pieces = [scene if k == 0 else SEPARATOR + scene for k, scene in enumerate(read)]
    assert sum(len(encode(piece)) for piece in pieces) == row["book_tokens"]
    scene, offset = cut["scene"], cut["offset"]
    held = len(encode(read[scene][offset:])) + sum(len(encode(p)) for p in pieces[scene + 1 :])
    assert held == row["book_tokens"] - row["window_start"], row["key"]
    assert 0 <= offset < len(read[scene])
    if offset > 0:  # the cut is at a token boundary: one character more is one token more
        assert len(encode(read[scene][offset - 1 :])) > len(encode(read[scene][offset:]))


def test_the_page_shows_the_question_the_options_and_the_scenes(
    build: Path, run: Path, browser: Any, artifacts: Path, tmp_path: Path
) -> None:
    page, refused = open_page(browser, build_html_report([run], tmp_path / "html"))
    book = _book(build)
    rows = run_rows(run)
    row = max(rows, key=lambda r: (r["window_start"] > 0, _evidence_folded(book, r), r["when_asked"]))
    page.locator(f'#samples tr[data-key="{row["key"]}"]').click()
    detail = page.locator("#detail")
    question = _question(book, row["id"])
    assert (
        detail.locator("p.question").inner_text()
        == "Question: Which of the following scenes was in the book?\nAnswer:"
    )
    options = detail.locator("table.options tr")
    assert options.count() == 1 + len(question.options)
    for index, option in enumerate(question.options):
        cells = options.nth(index + 1).locator("td")
        texts = cells.all_inner_texts()
        assert texts[0] == str(index + 1) and texts[1] == option.source.kind
        assert ("right" in texts[2]) == (index == row["answer"])
        assert ("picked" in texts[2]) == (index == row["prediction"])
        value = cells.nth(3).get_attribute("data-value")
        assert value is not None and float(value) == row["option_logprobs"][index]
        assert texts[3] == f"{row['option_logprobs'][index]:.3f}" and texts[4] == str(
            row["option_tokens"][index]
        )
        assert texts[6].startswith(option.text)
    verdict = detail.locator("p.verdict").inner_text()
    assert f"picked option {row['prediction'] + 1} ({row['option_kinds'][row['prediction']]})" in verdict
    assert f"the right one is option {row['answer'] + 1}" in verdict
    scenes = detail.locator(".scenes .scene")
    shown = [int(s) for s in scenes.evaluate_all("els => els.map(e => e.getAttribute('data-scene'))")]
    read = book.scenes[: row["scenes_read"]]
    assert shown[-SCENES_SHOWN:] == list(range(len(read) - SCENES_SHOWN, len(read)))
    assert shown == sorted(set(shown)) and all(0 <= index < len(read) for index in shown)
    for position, index in enumerate(shown):
        assert _scene_text(scenes.nth(position)) == read[index]
    folded = len(read) - len(shown)
    assert f"{folded} earlier" in detail.locator("p.scenes-note").inner_text()
    if question.true_scene is not None:
        assert page.locator(f'.scene.evidence[data-scene="{question.true_scene}"]').count() == 1
    assert row["window_start"] > 0 and _evidence_folded(book, row), "a late question whose evidence is folded"
    (report,) = load_runs([run])
    cut = run_samples(report).texts[row["id"]]["cut"]
    if cut["scene"] in shown:  # the held part of the cut scene is exactly what the view computed
        held = page.locator(f'.scene[data-scene="{cut["scene"]}"] .kept').text_content()
        assert held == read[cut["scene"]][cut["offset"] :]
        assert detail.locator(".scenes .cutmark").count() == 1 and detail.locator("p.cutmark").count() == 0
    else:
        assert f"starts in scene {cut['scene']} (folded) at character {cut['offset']}" in detail.inner_text()
    outside = [i for i in shown if i < cut["scene"]]
    assert all(page.locator(f'.scene[data-scene="{i}"] .dropped').count() == 1 for i in outside)
    page.screenshot(path=str(artifacts / "nxl.png"), full_page=True)
    page.close()
    assert refused == []


def _scene_text(scene: Any) -> str:
    """A scene's text as shown, without the cut mark (dropped part + held part)."""
    parts = scene.locator(".scene-text > span:not(.cutmark)").all_text_contents()
    return "".join(parts)


def _evidence_folded(book: ReadingBook, row: dict[str, Any]) -> bool:
    true_scene = _question(book, row["id"]).true_scene
    return true_scene is not None and true_scene < row["scenes_read"] - SCENES_SHOWN


def test_changed_or_missing_data_is_said_and_no_text_shown(
    build: Path, run: Path, browser: Any, tmp_path: Path
) -> None:
    moved = tmp_path / "run"
    shutil.copytree(run, moved)
    config = json.loads((moved / "config.json").read_text(encoding="utf-8"))
    changed = tmp_path / "changed"
    shutil.copytree(build, changed)
    (changed / "readalong" / "extra.txt").write_text("not the run's data", encoding="utf-8")
    config["config"]["data"]["path"] = str(changed)
    (moved / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (report,) = load_runs([moved])
    samples = run_samples(report)
    assert samples.texts == {} and "has changed since the run" in samples.text_note

    config["config"]["data"]["path"] = str(tmp_path / "gone")
    (moved / "config.json").write_text(json.dumps(config), encoding="utf-8")
    page, _ = open_page(browser, build_html_report([moved], tmp_path / "html"))
    row = run_rows(moved)[0]
    page.locator(f'#samples tr[data-key="{row["key"]}"]').click()
    detail = page.locator("#detail")
    assert "is not readable here" in detail.inner_text()
    assert detail.locator(".scenes").count() == 0
    assert detail.locator("table.options tr").count() == 1 + len(row["option_kinds"])  # scores still shown
    page.close()


def test_without_the_runs_tokenizer_no_cut_is_invented(run: Path, tmp_path: Path) -> None:
    served = copy_as_served(run, tmp_path / "served")
    (report,) = load_runs([served])
    samples = run_samples(report)
    assert "the window's cut is not placed: tokenizer hf:/nowhere/tokenizer not loadable" in samples.text_note
    cut_rows = [row for row in samples.rows if row["window_start"] > 0]
    assert cut_rows
    for row in cut_rows:
        text = samples.texts[row["id"]]
        assert text["cut"] is None and text["scenes"], row["key"]
        assert f"first held token {row['window_start']}" in text["cut_note"]
        assert "the place in the text is not shown" in text["cut_note"]


@pytest.fixture(scope="module")
def left_run(build: Path) -> Path:
    """A model without read-along: the scenes joined and cut from the left to the window (every
    question; several are asked after the same scene)."""
    from longread.models import load_backend
    from longread.models.requests import LANGUAGE_MODEL_CAPABILITIES

    backend = load_backend(TINY)
    backend.capabilities = LANGUAGE_MODEL_CAPABILITIES  # type: ignore[misc]  # log-likelihood only
    out = build.parent / "left_run"
    run_task(
        NarrativeXLTask(NarrativeXLSettings(window=WINDOW)),
        build,
        backend,
        out,
        RunOptions(show_progress=False),
    )
    return out


def test_a_log_likelihood_run_cut_from_the_left_is_placed_exactly(build: Path, left_run: Path) -> None:
    """A model without read-along gets the scenes joined and cut to the window: the cut is placed too."""
    from longread.models.hf.backend import HFTokenEncoder
    from longread.models.tokens import start_length

    settings = NarrativeXLSettings(window=WINDOW)
    (report,) = load_runs([left_run])
    samples = run_samples(report)
    encoder = HFTokenEncoder(load_random("gpt2").tokenizer)
    book = _book(build)
    cut_rows = [row for row in samples.rows if row["window_start"] > 0]
    assert cut_rows and all(row["policy"] == f"cut-left(window={WINDOW})" for row in samples.rows)
    for row in cut_rows:
        text = samples.texts[row["id"]]
        read = book.scenes[: row["scenes_read"]]
        cut = text["cut"]
        held = SEPARATOR.join([read[cut["scene"]][cut["offset"] :], *read[cut["scene"] + 1 :]])
        ids = encoder.encode((held + settings.prompt).rstrip())
        assert len(ids) - start_length(ids, encoder.start_token_id) == row["tokens_seen"], row["key"]
        assert "cut from the left" in text["cut_note"]


class CountingTokenizer:
    """The run's real tokenizer, recording the length of every text it is asked to tokenise."""

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer
        self.texts: list[int] = []

    def encode(self, text: str, **options: Any) -> Any:
        self.texts.append(len(text))
        return self._tokenizer.encode(text, **options)

    def __call__(self, text: str, **options: Any) -> Any:
        self.texts.append(len(text))
        return self._tokenizer(text, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tokenizer, name)


@pytest.fixture()
def counting(monkeypatch: pytest.MonkeyPatch) -> CountingTokenizer:
    """The report's cut finder over the real tokenizer of random:gpt2, counting what it tokenises."""
    import longread.report.html.narrativexl as narrativexl
    from longread.models.hf.backend import HFTokenEncoder
    from longread.report.html.cut import CutFinder

    tokenizer = CountingTokenizer(load_random("gpt2").tokenizer)
    finder = CutFinder(TINY, tokenizer, HFTokenEncoder(cast(Any, tokenizer)))
    monkeypatch.setattr(narrativexl, "cut_finder", lambda model: finder)
    tokenizer.texts.clear()
    return tokenizer


def test_a_read_along_books_scenes_are_tokenised_once(
    build: Path, run: Path, counting: CountingTokenizer
) -> None:
    (report,) = load_runs([run])
    samples = run_samples(report)
    read = max(row["scenes_read"] for row in samples.rows if row["window_start"] > 0)
    pieces = [scene if k == 0 else SEPARATOR + scene for k, scene in enumerate(_book(build).scenes[:read])]
    assert sorted(counting.texts) == sorted(len(piece) for piece in pieces)
    assert all(samples.texts[row["id"]]["cut"] for row in samples.rows if row["window_start"] > 0)


def test_a_context_cut_from_the_left_is_tokenised_once_per_scenes_read(
    build: Path, left_run: Path, counting: CountingTokenizer
) -> None:
    """Questions asked after the same scene read the same context: it is tokenised once for all of them
    (as many calls as placing one question's cut takes), however many questions share it."""
    from longread.report.html.narrativexl import narrativexl_texts
    from longread.report.html.samples import _run_settings, model_entry

    (report,) = load_runs([left_run])
    rows = [row for row in run_samples(report).rows if row["window_start"] > 0]
    contexts = {row["scenes_read"] for row in rows}
    assert len(rows) > len(contexts), "some questions should share the scenes they read"
    settings, model = _run_settings(left_run), model_entry(left_run)
    # What one question alone costs the tokenizer.
    counting.texts.clear()
    texts, _ = narrativexl_texts(report, rows[:1], settings, model)
    one = len(counting.texts)
    assert one > 0 and texts[rows[0]["id"]]["cut"] is not None
    counting.texts.clear()
    texts, _ = narrativexl_texts(report, rows, settings, model)
    assert len(counting.texts) == one * len(contexts)
    assert all(texts[row["id"]]["cut"] is not None for row in rows)


def test_the_page_is_the_same_bytes_with_and_without_the_token_cache(
    run: Path, left_run: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The report with its per-book token cache, and with one that forgets each tokenisation at once."""
    import longread.report.html.narrativexl as narrativexl

    runs = {"read-along": run, "cut-left": left_run}
    cached = {
        name: build_html_report([r], tmp_path / f"{name}-cached").read_bytes() for name, r in runs.items()
    }

    class Forgetful(narrativexl.BookTokens):
        def ids(self, book_id: str, index: int, scene: str) -> list[int]:
            self._ids.clear()
            return super().ids(book_id, index, scene)

        def kept_start(self, book_id: str, read: Any, kept: int) -> int | None:
            self._placed.clear()
            self._wanted.clear()
            return super().kept_start(book_id, read, kept)

    monkeypatch.setattr(narrativexl, "BookTokens", Forgetful)
    for name, r in runs.items():
        page = build_html_report([r], tmp_path / f"{name}-uncached").read_bytes()
        assert page == cached[name], name


# ---------------------------------------------------------------- MuLD


@pytest.fixture(scope="module")
def muld_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real MuLD HotpotQA run: built from Gutenberg pages, two tf-idf chunks kept, random GPT-2 answers."""
    from longread.benchmarks.muld.builders.hotpotqa import build_hotpotqa
    from longread.benchmarks.muld.builders.report import LengthFilter
    from longread.evaluation import make_task
    from longread.models import load_backend
    from tests.benchmarks.muld.builders.test_hotpotqa import QUESTIONS, write_page_pool

    root = tmp_path_factory.mktemp("muld_html")
    pool = write_page_pool(root / "pages.jsonl")
    data = root / "hotpotqa.jsonl.bz2"
    build_hotpotqa(QUESTIONS, pool, data, seed=7, length_filter=LengthFilter(min_tokens=7_500))
    task = make_task("muld/hotpotqa", {"chunk_tokens": "128", "top_k": "2", "answer_tokens": "6"})
    outcome = run_task(task, data, load_backend(TINY), root / "run", RunOptions(show_progress=False, limit=2))
    assert outcome.scored == 2 and not outcome.errors
    return root / "run"


def test_muld_rows_show_prediction_references_and_kept_chunks(
    muld_run: Path, browser: Any, tmp_path: Path
) -> None:
    from longread.report.html.samples import MULD_NOTE

    (report,) = load_runs([muld_run])
    samples = run_samples(report)
    assert samples.texts == {} and samples.text_note == MULD_NOTE
    page, refused = open_page(browser, build_html_report([muld_run], tmp_path / "html"))
    for row in run_rows(muld_run):
        page.locator(f'#samples tr[data-key="{row["key"]}"]').click()
        detail = page.locator("#detail")
        assert detail.locator("table.sidebyside pre.prediction").text_content() == row["prediction"]
        assert detail.locator("table.sidebyside pre.reference").all_text_contents() == row["references"]
        kept = row["kept"]["kept"]
        cells = detail.locator("table.kept tr")
        assert cells.count() == 1 + len(kept) == 3
        for index, chunk in enumerate(kept):
            texts = cells.nth(index + 1).locator("td").all_inner_texts()
            assert texts[0] == str(chunk["index"]) and texts[1] == f"{chunk['start']}–{chunk['end']}"
            assert texts[2] == f"{chunk['n_tokens']} of {chunk['full_tokens']}"
            assert texts[3] == f"{chunk['score']:.4f}"
        assert MULD_NOTE in detail.inner_text()
    page.close()
    assert refused == []
