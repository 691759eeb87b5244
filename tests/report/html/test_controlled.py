"""A controlled run in the HTML report: the context as SmolLM2 read it, decoded from the saved token ids,
its perturbed part marked and the kept tail equal to the intact prefix's own last K tokens; a run that
saved no ids says how to get the view. Real ChapterBreak instances from two bundled novels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from longread.benchmarks.chapterbreak.build import BuildOptions
from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak
from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.demos.chapterbreak import bundled_books
from longread.evaluation import RunOptions, run_task
from longread.evaluation.controls import ControlledTask, ControlSettings
from longread.models.hf.loading import smollm2_tokenizer
from longread.report.html import build_html_report
from longread.report.html.controlled import controlled_contexts
from longread.report.html.samples import model_entry
from longread.runs.inputs_log import INPUTS_FILE, read_inputs
from tests.models_fixtures import backend
from tests.report.html.pages import open_page, run_rows

KEEP = 16
SETTINGS = ChapterBreakSettings(prefix_lengths=(90,), suffix_tokens=6)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("controlled_runs")
    data = root / "cb.jsonl"
    books = [path for path in bundled_books() if path.name in ("pg84.txt.gz", "pg1342.txt.gz")]
    build_chapterbreak(books, data, BuildOptions(prefix_tokens=300, suffix_tokens=16), show_progress=False)
    plans: dict[str, tuple[ControlSettings | None, bool]] = {
        "intact": (None, True),
        "replace": (ControlSettings("replace", KEEP, 0), True),
        "shuffle": (ControlSettings("shuffle", KEEP, 0), False),
    }
    for name, (control, save) in plans.items():
        task: Any = ChapterBreakTask(SETTINGS)
        if control is not None:
            task = ControlledTask(task, control)
        options = RunOptions(show_progress=False, sample=4, save_inputs=save)
        outcome = run_task(task, data, backend("smollm2"), root / name, options)
        assert not outcome.errors
    return {name: root / name for name in plans}


def _decode(ids: list[int]) -> str:
    return str(smollm2_tokenizer().decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False))


def test_the_view_is_what_was_read_and_the_tail_is_the_intact_prefixs_own(runs: dict[str, Path]) -> None:
    intact = {line["key"]: line["context"] for line in read_inputs(runs["intact"] / INPUTS_FILE)}
    replaced = {line["key"]: line["context"] for line in read_inputs(runs["replace"] / INPUTS_FILE)}
    rows = run_rows(runs["replace"])
    views, note = controlled_contexts(runs["replace"], model_entry(runs["replace"]), rows)
    assert sorted(views) == sorted(row["key"] for row in rows) and len(rows) == 4
    assert "tokenizer smollm2" in note
    for row in rows:
        view, key = views[row["key"]], row["key"]
        assert view["tokens_perturbed"] == row["tokens_perturbed"] == 90 - KEEP
        assert view["kept"]["text"] == _decode(intact[key][-KEEP:])  # the kept tail is the prefix's own
        assert view["distant"]["text"] == _decode(replaced[key][:-KEEP])  # the donor's tokens, as read
        assert view["distant"]["text"] != _decode(intact[key][:-KEEP])
        assert view["donors"] == row["donors"] and view["donors"][0].split("/")[1] != row["book_id"]
    assert _views(runs["intact"]) == ({}, "")
    unsaved, why = _views(runs["shuffle"])
    assert unsaved == {} and "--save-inputs --resume" in why


def _views(run: Path) -> tuple[dict[str, Any], str]:
    return controlled_contexts(run, model_entry(run), run_rows(run))


def test_the_page_shows_the_controlled_context_with_its_tail_marked(
    runs: dict[str, Path], browser: Any, tmp_path: Path
) -> None:
    page, refused = open_page(browser, build_html_report(list(runs.values()), tmp_path / "html"))
    detail = page.locator("#detail")
    row = run_rows(runs["replace"])[0]
    page.locator(f'#samples tr[data-key="{row["key"]}"]').nth(1).click()  # intact, replace, shuffle: 2nd
    assert detail.locator("h4").first.inner_text().startswith("Context as the model read it — replace")
    intact = {line["key"]: line["context"] for line in read_inputs(runs["intact"] / INPUTS_FILE)}
    assert detail.locator(".controlled .kept").text_content() == _decode(intact[row["key"]][-KEEP:])
    assert detail.locator(".controlled .perturbed").text_content()
    assert f"{90 - KEEP} distant tokens replaced" in detail.locator("p.control-note").inner_text()
    page.locator(f'#samples tr[data-key="{row["key"]}"]').nth(2).click()
    assert "--save-inputs --resume" in detail.inner_text() and detail.locator(".controlled").count() == 0
    page.locator(f'#samples tr[data-key="{row["key"]}"]').nth(0).click()
    assert detail.locator("h4").first.inner_text() == "Context as the model saw it"  # intact: as before
    page.close()
    assert refused == []
