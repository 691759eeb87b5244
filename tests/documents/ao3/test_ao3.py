"""AO3 "Download → HTML" reader and the ChapterBreak AO3 filter, on hand-built downloads in tests/data/ao3."""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

import pytest

from longread.documents.ao3 import AO3Filter, normalise_language, read_ao3_html
from longread.documents.book import Book
from longread.errors import BadInputError, NoChaptersError
from tests.helpers import TEST_DATA

DATA = TEST_DATA / "ao3"
GENERAL = DATA / "lighthouse_ledger.html"  # English, General Audiences, 12 chapters, modern labels
TEEN = DATA / "midnight_diner.html"  # English, Teen And Up, 11 chapters, "… for the Chapter" labels
GERMAN = DATA / "winterbrot_de.html"  # Deutsch, General Audiences, 11 chapters
ONESHOT = DATA / "small_hours_oneshot.html"  # one chapter, no headings


@pytest.fixture(scope="module")
def general() -> Book:
    return read_ao3_html(GENERAL)


def test_chapters_in_order_with_their_own_headings(general: Book) -> None:
    headings = [chapter.heading for chapter in general.chapters]
    assert len(headings) == 12
    assert headings[0] == "Chapter 1: The Lamp"
    assert headings[6] == "Chapter 7"  # an untitled chapter keeps AO3's bare heading
    assert headings[11] == "Chapter 12: Morning, Again"
    for number, chapter in enumerate(general.chapters, 1):
        assert f"climb number {number} that week" in chapter.text


def test_paragraphs_joined_by_blank_lines_and_inline_markup_flattened(general: Book) -> None:
    text = general.chapters[0].text
    paragraphs = text.split("\n\n")
    assert paragraphs[0].startswith("Maren climbed the one hundred and twelve steps")
    assert "had dried crooked, as it always did" in text  # <em> is inline
    assert "Outside, the sea kept its own account.\nIt never balanced." in paragraphs  # <br/> is a line break
    assert "\n\n\n" not in general.chapters[3].text  # the <hr/> and &nbsp; spacer leave no empty paragraph


@pytest.mark.parametrize("path", [GENERAL, TEEN, GERMAN, ONESHOT], ids=lambda p: p.stem)
def test_notes_and_summaries_are_gone_from_the_text(path: Path) -> None:
    book = read_ao3_html(path)
    text, _ = book.render()
    assert "SENTINEL" not in text
    assert "Chapter Notes" not in text and "for the Chapter" not in text
    assert book.notes and book.notes[0].startswith("removed ")


def test_removed_blocks_are_counted_by_kind(general: Book) -> None:
    # 3 summaries + 3 notes + 2 chapter end notes + 1 inline author's note + 1 work end note.
    assert general.notes[0].startswith("removed 10 notes/summary blocks (")
    for kind in ("summary", "notes", "end notes", "author's note", "work end notes"):
        assert kind in general.notes[0]


def test_inline_authors_note_paragraph_is_removed_and_the_story_kept(general: Book) -> None:
    chapter = general.chapters[3]
    assert "Author" not in chapter.text
    assert chapter.text.startswith("Maren climbed")
    assert chapter.text.endswith("Later, the fog lifted.")


def test_older_summary_and_notes_modules_are_removed() -> None:
    book = read_ao3_html(TEEN)
    assert [c.heading for c in book.chapters][:2] == ["Chapter 1: Case File 1", "Chapter 2: Case File 2"]
    assert len(book.chapters) == 11
    assert "summary" in book.notes[0] and "end notes" in book.notes[0]
    assert book.chapters[6].text.startswith("The detectives met at the diner on Fifth Street on day 7")


def test_work_metadata(general: Book) -> None:
    meta = general.metadata
    assert general.id == "40000001"
    assert general.title == "The Lighthouse Keeper's Ledger"
    assert general.author == "saltwater_quill"
    assert general.language == "en"
    assert general.source == "ao3-html"
    assert meta["rating"] == "General Audiences"
    assert meta["archive_warning"] == "No Archive Warnings Apply"
    assert meta["fandom"] == "Original Work"
    assert meta["relationship"] == "Maren & The Lamp"
    assert meta["characters"] == "Maren, The Lamp, Supply Boat Captain"
    assert meta["additional_tags"] == "Lighthouses, Slow Burn, Found Family"
    assert meta["language"] == "English"
    assert meta["series"] == "Part 2 of Tides"
    assert meta["published"] == "2021-03-03"
    assert meta["completed"] == "2021-09-14"
    assert meta["words"] == "12480"
    assert meta["chapters"] == "12/12"
    assert meta["url"] == "https://archiveofourown.org/works/40000001"
    assert meta["summary"].startswith("WORKSUMMARY-SENTINEL")  # the work summary is metadata, not text


def test_non_english_work_gets_its_language_code() -> None:
    book = read_ao3_html(GERMAN)
    assert book.language == "de"
    assert book.metadata["language"] == "Deutsch"
    assert book.chapters[0].heading == "Kapitel 1"
    assert "„Noch ein Brot, bitte“" in book.chapters[0].text


def test_one_chapter_work_has_one_chapter_without_heading() -> None:
    book = read_ao3_html(ONESHOT)
    assert len(book.chapters) == 1
    assert book.chapters[0].heading == ""
    assert book.chapters[0].text == (
        "At three in the morning the kettle sang for nobody.\n\nShe drank the tea anyway."
    )


def test_compressed_download_reads_the_same(tmp_path: Path, general: Book) -> None:
    packed = tmp_path / "lighthouse_ledger.html.gz"
    packed.write_bytes(gzip.compress(GENERAL.read_bytes()))
    assert read_ao3_html(packed).chapters == general.chapters


@pytest.mark.parametrize(
    ("language", "code"),
    [
        ("English", "en"),
        ("Deutsch", "de"),
        ("Русский", "ru"),
        ("中文-普通话 國語", "zh"),
        ("en_US", "en-US"),
        ("", "und"),
    ],
)
def test_normalise_language(language: str, code: str) -> None:
    assert normalise_language(language) == code


# --- the ChapterBreak filter -------------------------------------------------------------


def test_paper_filter_keeps_the_general_english_long_work(general: Book) -> None:
    assert AO3Filter().reject_reason(general) is None
    assert AO3Filter().keeps(general)


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        (TEEN, "rating 'Teen And Up Audiences' is not 'General Audiences'"),
        (GERMAN, "language 'de' is not 'en'"),
        (ONESHOT, "312 words, fewer than 10,000"),
    ],
    ids=["teen", "german", "short"],
)
def test_paper_filter_rejects_with_the_reason(path: Path, reason: str) -> None:
    assert AO3Filter().reject_reason(read_ao3_html(path)) == reason


def test_filter_counts_chapters_and_can_switch_tests_off(general: Book) -> None:
    eleven_needed = dataclasses.replace(general, chapters=general.chapters[:10])
    assert AO3Filter().reject_reason(eleven_needed) == "10 chapters, fewer than 11"
    assert AO3Filter(min_chapters=10).reject_reason(eleven_needed) is None
    teen = read_ao3_html(TEEN)
    assert AO3Filter(rating=None).reject_reason(teen) is None
    assert AO3Filter(language=None).reject_reason(read_ao3_html(GERMAN)) is None


def test_filter_falls_back_to_counting_words_when_the_stats_lack_them(general: Book) -> None:
    metadata = {k: v for k, v in general.metadata.items() if k != "words"}
    book = dataclasses.replace(general, metadata=metadata)
    assert AO3Filter().reject_reason(book) == f"{book.word_count:,} words, fewer than 10,000"


def test_filter_without_rating_in_metadata(general: Book) -> None:
    book = dataclasses.replace(general, metadata={})
    assert AO3Filter().reject_reason(book) == "no rating in the work's metadata (needed 'General Audiences')"


# --- bad inputs -----------------------------------------------------------------------------


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.html"
    path.write_bytes(b"  \n")
    with pytest.raises(BadInputError, match=r"empty\.html: file is empty"):
        read_ao3_html(path)


def test_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "picture.html"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(BadInputError, match=r"picture\.html: binary file"):
        read_ao3_html(path)


def test_truncated_download_without_chapters_container(tmp_path: Path) -> None:
    path = tmp_path / "truncated.html"
    full = GENERAL.read_text(encoding="utf-8")
    path.write_text(full[: full.index('<div id="chapters"')], encoding="utf-8")
    with pytest.raises(BadInputError, match=r"truncated\.html: no <div id=\"chapters\">.*download the work"):
        read_ao3_html(path)


def test_chapters_container_without_text(tmp_path: Path) -> None:
    path = tmp_path / "hollow.html"
    path.write_text(
        '<html><body><div id="chapters" class="userstuff"> </div></body></html>', encoding="utf-8"
    )
    with pytest.raises(NoChaptersError, match=r"hollow\.html: the chapters container holds no text"):
        read_ao3_html(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="file not found"):
        read_ao3_html(tmp_path / "nope.html")


HEADING = '<div class="meta group"><h2 class="heading">{}</h2></div>'
TEXT = '<div class="userstuff">{}</div>'


def _minimal_work(chapters: str) -> str:
    preface = '<div id="preface"><h1>Mini</h1></div>'
    return f'<html><body>{preface}<div id="chapters" class="userstuff">{chapters}</div></body></html>'


def test_authors_own_notes_class_inside_the_story_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "skinned.html"
    chapter = HEADING.format("Chapter 1") + TEXT.format(
        '<p>Day one.</p><div class="notes"><p>The captain wrote: all calm.</p></div>'
    )
    path.write_text(_minimal_work(chapter * 2), encoding="utf-8")
    book = read_ao3_html(path)
    assert book.chapters[1].text == "Day one.\n\nThe captain wrote: all calm."
    assert book.notes == ("no language in the work's metadata",)
    assert (book.id, book.title, book.language) == ("skinned", "Mini", "und")


def test_chapter_without_text_is_kept_empty_and_noted(tmp_path: Path) -> None:
    path = tmp_path / "gap.html"
    chapters = (
        HEADING.format("Chapter 1")
        + TEXT.format("<p>One.</p>")
        + HEADING.format("Chapter 2")
        + HEADING.format("Chapter 3")
        + TEXT.format("<p>Three.</p>")
    )
    path.write_text(_minimal_work(chapters), encoding="utf-8")
    book = read_ao3_html(path)
    assert [(c.heading, c.text) for c in book.chapters] == [
        ("Chapter 1", "One."),
        ("Chapter 2", ""),
        ("Chapter 3", "Three."),
    ]
    assert "chapters without text: Chapter 2" in book.notes
