"""The HTML report as a person sees it: a real run, the page opened in headless Chromium, clicked.

Chromium comes from Debian (``chromium-headless-shell``) and Playwright drives it (OFFLINE.md);
both are installed by ``make test``. Every request the page makes other than ``file://`` is
aborted and recorded: the page must need none. Screenshots are kept under
``$LONGREAD_TEST_ARTIFACTS`` (or the test's temporary directory) and their path is printed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from longread.benchmarks.chapterbreak.build import BuildOptions, build_book
from longread.benchmarks.chapterbreak.io import load_instances, write_instances
from longread.benchmarks.chapterbreak.pipeline import build_chapterbreak
from longread.benchmarks.chapterbreak.task import ChapterBreakSettings, ChapterBreakTask
from longread.demos.chapterbreak import bundled_books
from longread.documents.book import Book, Chapter
from longread.evaluation import RunOptions, run_task
from longread.models import load_backend
from longread.models.hf.backend import HFTokenEncoder
from longread.models.hf.loading import smollm2_tokenizer
from longread.models.tokens import start_length
from longread.report.build import build_report
from longread.report.html import build_html_report, json_island
from longread.report.html.samples import run_samples
from longread.report.load import load_runs
from longread.report.table import format_table
from tests.report.html.pages import copy_as_served, open_page, run_rows

TINY = "random:gpt2"
HOSTILE = '</script><script>window.pwned = 1</script><img src="x" onerror="window.pwned = 2"> & <b>bold</b>'


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two real runs of a tiny random GPT-2: one on a bundled novel, one on a book with HTML in its text."""
    root = tmp_path_factory.mktemp("html_runs")
    novel = root / "novel.jsonl"
    frankenstein = [path for path in bundled_books() if path.name == "pg84.txt.gz"]
    assert frankenstein, "the bundled books lack pg84.txt.gz"
    build_chapterbreak(
        frankenstein, novel, BuildOptions(prefix_tokens=600, suffix_tokens=24), show_progress=False
    )
    hostile = root / "hostile.jsonl"
    write_instances(
        build_book(_hostile_book(), BuildOptions(prefix_tokens=300, suffix_tokens=24)).instances, hostile
    )
    backend = load_backend(TINY)
    settings = ChapterBreakSettings(prefix_lengths=(64, 512), suffix_tokens=12)
    quiet = RunOptions(show_progress=False, sample=8)
    run_task(ChapterBreakTask(settings), novel, backend, root / "novel", quiet)
    run_task(ChapterBreakTask(settings), hostile, backend, root / "hostile", quiet)
    return [root / "novel", root / "hostile"]


def _hostile_book() -> Book:
    chapters = tuple(
        Chapter(
            heading=f"CHAPTER {index}.",
            text="\n\n".join(
                f"Paragraph {p} of chapter {index}. {HOSTILE} The sea was calm." for p in range(20)
            ),
        )
        for index in range(1, 8)
    )
    return Book(
        id="hostile", title="A <i>hostile</i> book", author="Anon", language="en", source="<synthetic>",
        chapters=chapters,
    )  # fmt: skip


def test_table_filters_sample_and_toggle_in_chromium(
    runs: list[Path], browser: Any, artifacts: Path, tmp_path: Path
) -> None:
    page_path = build_html_report(runs, tmp_path / "html")
    page, refused = open_page(browser, page_path)
    page.screenshot(path=str(artifacts / "1-page.png"), full_page=True)

    # the table shows the numbers of results.json, cell for cell as report.md
    markdown = build_report(runs, tmp_path / "md").table
    labels = [run.label for run in load_runs(runs)]
    for run, label in zip(runs, labels, strict=True):
        results = json.loads((run / "results.json").read_text(encoding="utf-8"))
        for key, entry in results["by_x"].items():
            cells = page.locator(f'table.results tr[data-x="{key}"]').filter(has_text=label).first
            texts = cells.locator("td").all_inner_texts()
            accuracy = entry["metrics"]["accuracy"]
            assert texts[2] == str(entry["n"])
            assert texts[3] == (
                f"{100 * accuracy['value']:.1f} "
                f"[{100 * accuracy['ci_low']:.1f}–{100 * accuracy['ci_high']:.1f}]"
            )
            assert f"| {' | '.join(texts)} |" in markdown

    # filter: wrong answers only
    all_rows = [row for run in runs for row in run_rows(run)]
    assert page.locator("#sample-count").inner_text() == str(len(all_rows))
    page.get_by_role("button", name="wrong", exact=True).click()
    wrong = [row for row in all_rows if not row["correct"]]
    assert 0 < len(wrong) < len(all_rows), (
        "the tiny model should be right on some samples and wrong on others"
    )
    assert page.locator("#sample-count").inner_text() == str(len(wrong))
    assert page.locator("#samples tbody tr").count() == len(wrong)
    page.locator("#filter-x").select_option("512")
    wrong_512 = [row for row in wrong if row["prefix_length"] == 512]
    assert page.locator("#samples tbody tr").count() == len(wrong_512)
    page.locator("#filter-x").select_option("")
    page.screenshot(path=str(artifacts / "2-wrong.png"), full_page=True)

    # open one sample of the novel: its candidates, their log-probs and the pick
    row = next(row for row in run_rows(runs[0]) if not row["correct"] and row["context_truncated"])
    page.locator(f'#samples tr[data-key="{row["key"]}"]').filter(has_text=labels[0]).click()
    detail = page.locator("#detail")
    candidates = detail.locator("table.candidates tr")
    assert candidates.count() == 1 + len(row["logprobs"])
    for index, logprob in enumerate(row["logprobs"]):
        cells = candidates.nth(index + 1).locator("td").all_inner_texts()
        assert cells[0] == str(index) and cells[2] == f"{logprob:.3f}"
        assert ("picked" in cells[1]) == (index == row["prediction"])
    assert f"picked candidate {row['prediction']}" in detail.inner_text()
    assert f"kept {row['context_tokens_kept']} of {row['context_tokens_original']}" in detail.inner_text()
    assert detail.locator(".cutmark").count() == 1
    assert detail.locator(".context .kept").inner_text().strip()
    assert (
        detail.locator("p.cut").inner_text() == "cut: exact (tokenizer random:gpt2)"
    )  # slow GPT-2 tokenizer
    detail.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "3-sample.png"), full_page=True)

    # hover on a point of the first model (drawn under the second's band): n and its interval
    page.locator('svg g.series[data-run="run0"] circle.point').last.hover()
    tip = page.locator("#tip")
    assert tip.is_visible() and tip.inner_text().startswith(labels[0]) and "n=8" in tip.inner_text()

    # toggle the first model off: its series, its table rows and its samples disappear
    page.get_by_role("button", name="all", exact=True).click()
    page.locator(".toggles input").first.uncheck()
    assert page.locator('svg g.series[data-run="run0"]').is_hidden()
    assert page.locator('svg g.series[data-run="run1"]').is_visible()
    assert page.locator('table.results tr[data-run="run0"]').first.is_hidden()
    assert page.locator("#sample-count").inner_text() == str(len(run_rows(runs[1])))
    page.locator('svg g.series[data-run="run1"] circle.point').first.hover()
    assert tip.is_visible() and "n=" in tip.inner_text() and "[" in tip.inner_text()
    page.screenshot(path=str(artifacts / "4-toggled.png"), full_page=True)
    page.close()
    assert refused == [], f"the page asked the network for {refused}"


def test_book_text_is_shown_as_text_never_run(runs: list[Path], browser: Any, tmp_path: Path) -> None:
    page_path = build_html_report(runs, tmp_path / "html")
    assert HOSTILE not in page_path.read_text(encoding="utf-8")  # only escaped copies are in the page
    page, refused = open_page(browser, page_path)
    page.locator("#filter-group").select_option("hostile")
    page.locator("#samples tbody tr").first.click()
    detail = page.locator("#detail")
    assert HOSTILE in detail.locator(".context").inner_text()
    assert "</script><script>window.pwned = 1" in detail.locator("table.candidates").inner_text()
    assert page.evaluate("window.pwned") is None
    assert page.locator("#detail img, #detail b, #detail script").count() == 0
    page.close()
    assert refused == []


def test_missing_data_file_is_said(runs: list[Path], browser: Any, tmp_path: Path) -> None:
    data = Path(json.loads((runs[1] / "config.json").read_text())["config"]["data"]["path"])
    moved = data.with_suffix(".moved")
    data.rename(moved)
    try:
        page_path = build_html_report(runs[1:], tmp_path / "html")
    finally:
        moved.rename(data)
    page, _ = open_page(browser, page_path)
    page.locator("#samples tbody tr").first.click()
    assert "is not readable here" in page.locator("#detail").inner_text()
    assert page.locator("#detail .context").count() == 0
    page.close()


def test_json_island_cannot_close_its_script() -> None:
    island = json_island({"text": "</script><!-- & -->"})
    assert "<" not in island and ">" not in island and "&" not in island
    assert json.loads(island) == {"text": "</script><!-- & -->"}


def test_table_cells_match_the_markdown_table(runs: list[Path], tmp_path: Path) -> None:
    text = build_html_report(runs, tmp_path / "html").read_text(encoding="utf-8")
    rows = [line for line in format_table(load_runs(runs)).splitlines()[2:]]
    for line in rows:
        for cell in line.strip("| ").split(" | ")[1:]:
            assert f">{cell.replace('**', '')}<" in text or cell == "all" or cell == ""


@pytest.fixture(scope="module")
def smollm2_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real SmolLM2 run on a bundled novel, its prefixes cut to 40 and 90 SmolLM2 tokens."""
    root = tmp_path_factory.mktemp("cut_runs")
    novel = root / "novel.jsonl"
    frankenstein = [path for path in bundled_books() if path.name == "pg84.txt.gz"]
    build_chapterbreak(
        frankenstein, novel, BuildOptions(prefix_tokens=300, suffix_tokens=16), show_progress=False
    )
    settings = ChapterBreakSettings(prefix_lengths=(40, 90), suffix_tokens=6)
    run_task(
        ChapterBreakTask(settings), novel, load_backend("smollm2"), root / "smollm2",
        RunOptions(show_progress=False, sample=3),
    )  # fmt: skip
    return root / "smollm2"


def _text_ids(encoder: HFTokenEncoder, text: str) -> list[int]:
    ids = encoder.encode(text)
    return ids[start_length(ids, encoder.start_token_id) :]


def test_the_cut_is_exact_to_the_token_with_the_runs_tokenizer(smollm2_run: Path) -> None:
    """The kept text, tokenised again, is the model's last kept tokens; one character more adds one."""
    (run,) = load_runs([smollm2_run])
    samples = run_samples(run)
    assert samples.cut == "exact (tokenizer smollm2)" and "exact (tokenizer smollm2)" in samples.text_note
    config = json.loads((smollm2_run / "config.json").read_text(encoding="utf-8"))
    prefixes = {i.id: i.prefix for i in load_instances(Path(config["config"]["data"]["path"]))}
    encoder = HFTokenEncoder(smollm2_tokenizer())
    rows = [row for row in samples.rows if row["context_truncated"]]
    assert len(rows) == len(samples.rows) == 6, "every prefix should be longer than 90 SmolLM2 tokens"
    for row in rows:
        kept = row["context_tokens_kept"]
        start = samples.texts[row["id"]]["cuts"][str(kept)]
        stripped = prefixes[row["id"]].rstrip()
        whole = _text_ids(encoder, stripped)
        assert len(whole) == row["context_tokens_original"]
        assert _text_ids(encoder, stripped[start:]) == whole[-kept:], row["key"]
        assert len(_text_ids(encoder, stripped[start - 1 :])) == kept + 1, row["key"]
        assert not stripped[start].isalnum() or not stripped[start - 1].isalnum(), "a cut inside a word"


def test_the_page_marks_the_exact_cut_and_an_unloadable_tokenizer_as_approximate(
    smollm2_run: Path, browser: Any, tmp_path: Path
) -> None:
    served = copy_as_served(smollm2_run, tmp_path / "served")
    (approximate,) = load_runs([served])
    note = run_samples(approximate).text_note
    assert "approximate: tokenizer hf:/nowhere/tokenizer not loadable here" in note and "exact" not in note

    page, refused = open_page(browser, build_html_report([smollm2_run, served], tmp_path / "html"))
    encoder = HFTokenEncoder(smollm2_tokenizer())
    row = next(row for row in run_rows(smollm2_run) if row["prefix_length"] == 40)
    rows = page.locator(f'#samples tr[data-key="{row["key"]}"]')
    rows.first.click()
    detail = page.locator("#detail")
    assert detail.locator("p.cut").inner_text() == "cut: exact (tokenizer smollm2)"
    kept_text = detail.locator(".context .kept").text_content().rstrip()  # the model read prefix.rstrip()
    assert len(_text_ids(encoder, kept_text)) == row["context_tokens_kept"] == 40
    dropped = detail.locator(".context .dropped").text_content()
    assert len(_text_ids(encoder, dropped[-1] + kept_text)) == 41
    rows.nth(1).click()
    assert detail.locator("p.cut").inner_text().startswith("cut: approximate: tokenizer hf:/nowhere")
    assert detail.locator(".cutmark").count() == 1
    page.close()
    assert refused == []
