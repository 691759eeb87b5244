"""Chapter detection on tiny texts of each heading style, and on real Gutenberg books."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from longread.documents.chapters import ChapterSpan, detect_chapters, spans_to_chapters, split_by_pattern
from longread.documents.chapters.headings import format_number, to_roman
from longread.errors import BadInputError, NoChaptersError
from tests.helpers import GUTENBERG as CORPUS
from tests.helpers import gutenberg_book
from tests.helpers import needs_shared as needs_corpus

PROSE = (
    "The rain came down on the harbour all night, and the ships rocked at their moorings while the\n"
    "keeper walked the long pier with his lamp, counting the hulls and thinking of the morning.\n"
)


def book(*headings: str, between: str = PROSE) -> str:
    return "\n\n\n".join(f"{heading}\n\n{between}" for heading in headings)


def headings(text: str) -> list[str]:
    return [span.heading for span in detect_chapters(text)]


@pytest.mark.parametrize(
    "style",
    [
        "CHAPTER {roman}",
        "Chapter {arabic}",
        "CHAPTER {word}",
        "Chapter the {ordinal}",
        "{roman}.",
        "{roman}. THE STORM",
        "{arabic}. The Storm at Sea",
        "STAVE {word}",
        "LETTER {arabic}",
    ],
)
def test_heading_styles(style: str) -> None:
    romans, words, ordinals = (
        ["I", "II", "III", "IV"],
        ["ONE", "TWO", "THREE", "FOUR"],
        ["First", "Second", "Third", "Fourth"],
    )
    lines = [
        style.format(roman=r, arabic=i + 1, word=w, ordinal=o)
        for i, (r, w, o) in enumerate(zip(romans, words, ordinals, strict=True))
    ]
    assert headings("Title page\n\n\n" + book(*lines)) == lines


def test_title_on_the_next_line_joins_the_heading() -> None:
    text = book("CHAPTER I\n\nIn Which the Reader Is Introduced", "CHAPTER II\n\nA Progress", "CHAPTER III")
    spans = detect_chapters(text)
    assert [s.heading for s in spans] == [
        "CHAPTER I In Which the Reader Is Introduced",
        "CHAPTER II A Progress",
        "CHAPTER III",
    ]
    assert text[spans[0].body_start :].startswith("The rain came down")


def test_spans_cover_the_text_in_order() -> None:
    text = book("CHAPTER I", "CHAPTER II", "CHAPTER III")
    spans = detect_chapters(text)
    assert all(a.body_end <= b.heading_start for a, b in itertools.pairwise(spans))
    assert spans[-1].body_end == len(text)
    assert all(s.heading_start < s.body_start <= s.body_end for s in spans)


def test_contents_list_is_not_taken_for_chapters() -> None:
    contents = "CONTENTS\n\nCHAPTER I\n\nCHAPTER II\n\nCHAPTER III\n\n\nPREFACE\n\n" + PROSE * 3
    text = contents + "\n\n\n" + book("CHAPTER I", "CHAPTER II", "CHAPTER III")
    spans = detect_chapters(text)
    assert len(spans) == 3
    assert spans[0].heading_start > text.index("PREFACE")


def test_single_spaced_contents_list_is_skipped() -> None:
    contents = "CONTENTS\n\nI. The Storm\nII. The Calm\nIII. The Shore\n\n\n"
    text = contents + book("I. The Storm", "II. The Calm", "III. The Shore")
    spans = detect_chapters(text)
    assert [s.heading for s in spans] == ["I. The Storm", "II. The Calm", "III. The Shore"]
    assert spans[0].heading_start > len(contents) - 5


def test_book_and_part_headings_become_parts() -> None:
    text = book("BOOK ONE\n\n\nCHAPTER I", "CHAPTER II", "BOOK TWO\n\n\nCHAPTER III", "CHAPTER IV")
    spans = detect_chapters(text)
    assert [s.heading for s in spans] == ["CHAPTER I", "CHAPTER II", "CHAPTER III", "CHAPTER IV"]
    assert [s.parts for s in spans] == [("BOOK ONE",), (), ("BOOK TWO",), ()]
    # The part heading belongs to the text before its chapter, not to the previous chapter's body.
    assert "BOOK TWO" not in text[spans[1].body_start : spans[1].body_end]


def test_numbering_restarts_in_each_part() -> None:
    text = book("PART I\n\nI.", "II.", "PART II\n\nI.", "II.", "III.")
    assert len(detect_chapters(text)) == 5


def test_sections_inside_chapters_are_not_chapters() -> None:
    text = book("CHAPTER I", "II", "III", "CHAPTER II", "II", "CHAPTER III", "II", "III")
    assert headings(text) == ["CHAPTER I", "CHAPTER II", "CHAPTER III"]


def test_prologue_and_epilogue_are_units() -> None:
    text = book("PROLOGUE", "CHAPTER I", "CHAPTER II", "EPILOGUE")
    assert headings(text) == ["PROLOGUE", "CHAPTER I", "CHAPTER II", "EPILOGUE"]


def test_prose_lines_starting_like_numbers_are_not_headings() -> None:
    text = book("I.", "II.", "III.", between=PROSE + "\nI was wonderful.\n\n" + PROSE)
    assert headings(text) == ["I.", "II.", "III."]


def test_no_chapters_raises_with_reason() -> None:
    with pytest.raises(NoChaptersError, match="no chapter headings found") as info:
        detect_chapters(PROSE * 20, source="story.txt")
    assert info.value.path == "story.txt"
    assert info.value.hint


def test_a_lone_heading_is_not_a_chapter_structure() -> None:
    with pytest.raises(NoChaptersError, match="only one chapter heading"):
        detect_chapters(book("CHAPTER I"))


def test_only_a_contents_list_raises() -> None:
    text = "CONTENTS\n\nCHAPTER I\n\nCHAPTER II\n\nCHAPTER III\n\nCHAPTER IV\n"
    with pytest.raises(NoChaptersError, match="contents list"):
        detect_chapters(text)


def test_unordered_numbers_are_not_chapters() -> None:
    with pytest.raises(NoChaptersError, match="not a sequence"):
        detect_chapters(book("17.", "4.", "1895.", "12."))


def test_split_by_pattern() -> None:
    text = "front\n== One ==\nbody one\n== Two ==\nbody two\n"
    spans = split_by_pattern(text, r"^== ")
    assert spans == [
        ChapterSpan("== One ==", 6, 16, 25),
        ChapterSpan("== Two ==", 25, 35, len(text)),
    ]
    chapters = spans_to_chapters(text, spans)
    assert [(c.heading, c.text) for c in chapters] == [("== One ==", "body one"), ("== Two ==", "body two")]


def test_split_by_pattern_needs_two_matches() -> None:
    with pytest.raises(NoChaptersError, match="matches only once"):
        split_by_pattern("== One ==\nbody", r"^== ")
    with pytest.raises(NoChaptersError, match="never matches"):
        split_by_pattern("body", r"^== ")
    with pytest.raises(BadInputError, match="invalid heading pattern"):
        split_by_pattern("body", r"^(")


def test_spans_to_chapters_strips_blank_lines() -> None:
    text = book("CHAPTER I", "CHAPTER II")
    chapters = spans_to_chapters(text, detect_chapters(text))
    assert chapters[0].text == PROSE.strip()
    assert chapters[1].heading == "CHAPTER II"


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                ["CHAPTER I", "II.", "PART ONE", "EPILOGUE", "", "\n", "1.", "Chapter the First"]
            ),
            st.text(max_size=80),
        ),
        max_size=30,
    )
)
def test_detection_only_raises_no_chapters(pieces: list[str]) -> None:
    text = "\n\n".join(pieces)
    try:
        spans = detect_chapters(text)
    except NoChaptersError:
        return
    assert len(spans) >= 2
    assert all(0 <= s.heading_start <= s.body_start <= s.body_end <= len(text) for s in spans)


@needs_corpus
@pytest.mark.parametrize(
    ("book_id", "count", "first", "last"),
    [
        (2701, 136, "CHAPTER 1. Loomings.", "Epilogue"),
        (98, 45, "I. The Period", "XV. The Footsteps Die Out For Ever"),
        (84, 28, "Letter 1", "Chapter 24"),
        (543, 39, "CHAPTER I", "CHAPTER XXXIX"),
    ],
)
def test_real_books(book_id: int, count: int, first: str, last: str) -> None:
    from longread.documents.gutenberg import read_gutenberg

    chapters = read_gutenberg(CORPUS / f"pg{book_id}.txt.gz").chapters
    assert len(chapters) == count
    assert chapters[0].heading.startswith(first)
    assert chapters[-1].heading.startswith(last)


# ---------------------------------------------------------------------------
# heading forms real editions use (the issue "chapter detection must hold on unseen books")

LONG_PROSE = PROSE * 6  # a unit of its own: more than MIN_TITLED_UNIT_WORDS


@pytest.mark.parametrize(
    ("part", "chapter"),
    [
        ("BOOK {n}", "CHAPTER {roman}"),
        ("PART {n}", "{roman}."),
        ("VOLUME {n}", "{roman}. The {word} Day"),
        ("BOOK THE {ordinal}", "Chapter {arabic}"),
        ("PART {n}", "{arabic}"),
    ],
)
def test_numbering_restarts_in_each_book_part_or_volume(part: str, chapter: str) -> None:
    per_part = [3, 2, 4]
    romans, words, ordinals = (
        ["I", "II", "III", "IV"],
        ["One", "Two", "Three", "Four"],
        ["FIRST", "SECOND", "THIRD"],
    )
    pieces, expected, expected_parts = [], [], []
    for p, count in enumerate(per_part):
        for c in range(count):
            heading = chapter.format(roman=romans[c], arabic=c + 1, word=words[c])
            part_heading = part.format(n=romans[p], ordinal=ordinals[p])
            pieces.append(f"{part_heading}\n\n\n{heading}" if c == 0 else heading)
            expected.append(heading)
            expected_parts.append((part_heading,) if c == 0 else ())
    spans = detect_chapters("Title page\n\n\n" + book(*pieces))
    assert [s.heading for s in spans] == expected
    assert [s.parts for s in spans] == expected_parts


def test_restarting_numbering_after_a_contents_list_that_restarts_too() -> None:
    contents = "CONTENTS\n\nBOOK I\n\nCHAPTER I\n\nCHAPTER II\n\nBOOK II\n\nCHAPTER I\n\nCHAPTER II\n\n\n"
    text = contents + book("BOOK I\n\nCHAPTER I", "CHAPTER II", "BOOK II\n\nCHAPTER I", "CHAPTER II")
    spans = detect_chapters(text)
    assert [s.heading for s in spans] == ["CHAPTER I", "CHAPTER II", "CHAPTER I", "CHAPTER II"]
    assert spans[0].heading_start > len(contents)


@pytest.mark.parametrize(
    "style",
    ["_CHAPTER {roman}_", "_{roman}_", "*{roman}*", "=CHAPTER {roman}=", "_Chapter {roman}. The Storm_"],
)
def test_headings_in_emphasis_marks(style: str) -> None:
    lines = [style.format(roman=r) for r in ("I", "II", "III", "IV")]
    spans = detect_chapters("Title page\n\n\n" + book(*lines))
    assert [s.heading for s in spans] == lines


def test_emphasis_inside_prose_is_not_a_heading() -> None:
    text = book(
        "CHAPTER I",
        "CHAPTER II",
        between=PROSE + "\n_I_ said nothing at all to him about the ship.\n\n" + PROSE,
    )
    assert headings(text) == ["CHAPTER I", "CHAPTER II"]


@pytest.mark.parametrize(
    ("number", "title"),
    [
        ("{roman}", "THE {upper} NIGHT"),
        ("{roman}.", "The {word} Night on the Moor"),
        ("{arabic}", "The {word} Night"),
        ("{roman}", "I Am {word}"),  # a title that starts like a roman numeral
    ],
)
@pytest.mark.parametrize("gap", ["\n", "\n\n", "\n\n\n"])
def test_number_line_then_title_line(number: str, title: str, gap: str) -> None:
    words = ["First", "Second", "Third", "Fourth"]
    lines = [
        number.format(roman=r, arabic=i + 1) + gap + title.format(word=w, upper=w.upper())
        for i, (r, w) in enumerate(zip(["I", "II", "III", "IV"], words, strict=True))
    ]
    spans = detect_chapters("Title page\n\n\n" + book(*lines))
    assert [s.heading for s in spans] == [" ".join(line.split()) for line in lines]
    text = "Title page\n\n\n" + book(*lines)
    assert all(text[s.body_start :].startswith("The rain came down") for s in spans)


def test_first_section_numeral_joins_the_chapter_heading() -> None:
    text = book("CHAPTER I\n\nI", "II", "CHAPTER II", "CHAPTER III\n\nI", "II", "EPILOGUE\n\nI", "II")
    spans = detect_chapters(text)
    assert [s.heading for s in spans] == ["CHAPTER I I", "CHAPTER II", "CHAPTER III I", "EPILOGUE I"]
    assert all(text[s.body_start :].startswith("The rain came down") for s in spans)


def test_a_letters_address_opens_its_body() -> None:
    address = "\n\n_To Mrs. Saville, England._"
    text = book("Letter 1" + address, "Letter 2" + address, "Chapter 1", "Chapter 2")
    spans = detect_chapters(text)
    assert [s.heading for s in spans] == ["Letter 1", "Letter 2", "Chapter 1", "Chapter 2"]
    assert text[spans[0].body_start :].startswith("_To Mrs. Saville")


STORIES = ("The Storm at Sea", "The Harbour Light", "A Long Night", "The Kiss")


def _contents(*entries: str) -> str:
    return "THE COLLECTED STORIES\n\n\nContents:\n\n" + "\n".join(f"     {e}" for e in entries) + "\n\n\n\n\n"


def test_stories_named_in_the_contents_are_units_without_numbers() -> None:
    text = _contents(*STORIES) + book(*(s.upper() for s in STORIES), between=LONG_PROSE)
    spans = detect_chapters(text)
    assert [s.heading for s in spans] == [s.upper() for s in STORIES]
    assert all(text[s.body_start :].startswith("The rain came down") for s in spans)


def test_contents_entries_with_page_numbers_name_units() -> None:
    entries = [
        f"{story} {'.' * (30 - len(story))} {page}"
        for story, page in zip(STORIES, (1, 23, 57, 101), strict=True)
    ]
    text = _contents(*entries) + book(*(s.upper() for s in STORIES), between=LONG_PROSE)
    assert headings(text) == [s.upper() for s in STORIES]


def test_a_novel_then_stories_named_in_the_contents() -> None:
    novel = "THE AWAKENING\n\n\nI", "II", "III"
    text = _contents("The Awakening", *STORIES) + book(
        *novel, *(s.upper() for s in STORIES), between=LONG_PROSE
    )
    spans = detect_chapters(text)
    assert [s.heading for s in spans] == ["I", "II", "III", *(s.upper() for s in STORIES)]
    assert spans[0].parts == ("THE AWAKENING",)


@pytest.mark.parametrize("with_contents", [True, False])
def test_narratives_with_and_without_chapters(with_contents: bool) -> None:
    entries = ("FIRST NARRATIVE", "SECOND NARRATIVE", "THIRD NARRATIVE")
    front = _contents(*entries) if with_contents else "THE MOONSTONE\n\n\n"
    text = front + book(
        "FIRST NARRATIVE.\n\n\nCHAPTER I",
        "CHAPTER II",
        "SECOND NARRATIVE.",  # no chapters of its own: a unit
        "THIRD NARRATIVE.\n\n\nCHAPTER I",
        "CHAPTER II",
        between=PROSE * 14,  # a whole narrative: longer than a part's preamble may be
    )
    spans = detect_chapters(text)
    assert [s.heading for s in spans] == [
        "CHAPTER I",
        "CHAPTER II",
        "SECOND NARRATIVE.",
        "CHAPTER I",
        "CHAPTER II",
    ]
    assert [s.parts for s in spans] == [("FIRST NARRATIVE.",), (), (), ("THIRD NARRATIVE.",), ()]


def test_a_title_before_chapter_two_stands_for_chapter_one() -> None:
    entry = "THE STORY BEGUN BY WALTER HARTRIGHT"
    text = _contents(entry) + book(entry, "II", "III", "IV", between=LONG_PROSE)
    assert headings(text) == [entry, "II", "III", "IV"]


def test_titles_not_in_the_contents_are_not_units() -> None:
    text = _contents(*STORIES[:2]) + book(
        "THE STORM AT SEA", "A LONG NIGHT", "THE HARBOUR LIGHT", between=LONG_PROSE
    )
    assert headings(text) == ["THE STORM AT SEA", "THE HARBOUR LIGHT"]


def test_a_preface_named_in_the_contents_is_not_a_unit() -> None:
    text = _contents("Preface", "Chapter I", "Chapter II") + book(
        "PREFACE", "CHAPTER I", "CHAPTER II", between=LONG_PROSE
    )
    assert headings(text) == ["CHAPTER I", "CHAPTER II"]


def test_a_numbered_run_of_narratives_inside_the_chapters() -> None:
    narratives = [
        f"{n}. THE NARRATIVE OF {who}" for n, who in enumerate(["THE COOK", "THE DOCTOR", "THE MAID"], 1)
    ]
    text = book("I", "II", *narratives, "III", between=LONG_PROSE)
    assert headings(text) == ["I", "II", *narratives, "III"]


def test_titled_sections_in_every_chapter_stay_in_the_chapters() -> None:
    sections = [f"{n}. The {w} Watch" for n, w in enumerate(["First", "Second", "Third"], 1)]
    text = book(*[h for chapter in ("CHAPTER I", "CHAPTER II", "CHAPTER III") for h in (chapter, *sections)])
    assert headings(text) == ["CHAPTER I", "CHAPTER II", "CHAPTER III"]


def test_a_contents_list_of_parts_does_not_head_the_first_chapter() -> None:
    text = "CONTENTS\n\nFirst Epoch\n\nSecond Epoch\n\n\n" + book("I", "II", "III")
    assert [s.parts for s in detect_chapters(text)] == [(), (), ()]


# ---------------------------------------------------------------------------
# the shared books named in the issue, against their HTML edition's chapters

TRUTH_KEY_CHARS = 30  # as bench/chapter_detection.py: the true opening's first alphanumerics
TRUTH_SLACK_CHARS = 250  # … found at most this far into the detected chapter (a subtitle, an address)


def _alphanumerics(text: str) -> str:
    import unicodedata

    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed.lower() if ch.isalnum() and ch.isascii())


def _truth(book_id: int) -> list[dict[str, str]]:
    import json

    for line in (CORPUS / "chapters_truth.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["id"] == book_id:
            return list(row["chapters"])
    raise AssertionError(f"pg{book_id} has no row in chapters_truth.jsonl")


@needs_corpus
@pytest.mark.parametrize("book_id", [583, 155, 160, 84, 543])
def test_named_books_find_every_true_chapter_and_nothing_else(book_id: int) -> None:
    """Un-numbered narratives (583, 155), stories after a novel (160), letters (84), sections (543)."""
    from longread.documents.gutenberg import read_gutenberg

    chapters = read_gutenberg(gutenberg_book(book_id)).chapters
    truth = _truth(book_id)
    assert len(chapters) == len(truth)
    for chapter, true in zip(chapters, truth, strict=True):
        start = _alphanumerics(chapter.heading) + _alphanumerics(chapter.text[: TRUTH_SLACK_CHARS * 3])
        key = _alphanumerics(true["opening"])[:TRUTH_KEY_CHARS]
        assert key in start[: len(_alphanumerics(chapter.heading)) + TRUTH_SLACK_CHARS], (
            chapter.heading,
            true,
        )


@needs_corpus
def test_narratives_head_their_chapters_or_stand_alone() -> None:
    from longread.documents.gutenberg import read_gutenberg

    moonstone = read_gutenberg(gutenberg_book(155)).chapters
    assert "FOURTH NARRATIVE. _Extracted from the Journal of Ezra Jennings._" in [
        c.heading for c in moonstone
    ]
    assert ("THIRD NARRATIVE. _Contributed by Franklin Blake._",) in [c.parts for c in moonstone]
    woman_in_white = read_gutenberg(gutenberg_book(583)).chapters
    assert woman_in_white[0].heading == "THE STORY BEGUN BY WALTER HARTRIGHT"
    assert woman_in_white[0].parts == ()
    assert woman_in_white[0].text.startswith("(of Clement's Inn")
    assert [c.heading for c in woman_in_white if c.heading[0].isdigit()] == [
        "1. THE NARRATIVE OF HESTER PINHORN, COOK IN THE SERVICE OF COUNT FOSCO",
        "2. THE NARRATIVE OF THE DOCTOR",
        "3. THE NARRATIVE OF JANE GOULD",
        "4. THE NARRATIVE OF THE TOMBSTONE",
        "5. THE NARRATIVE OF WALTER HARTRIGHT",
    ]
    awakening = read_gutenberg(gutenberg_book(160)).chapters
    assert awakening[0].parts == ("THE AWAKENING",)
    assert awakening[-1].heading == "A REFLECTION"


@needs_corpus
def test_letter_address_and_first_section_numeral_on_real_books() -> None:
    from longread.documents.gutenberg import read_gutenberg

    frankenstein = read_gutenberg(gutenberg_book(84)).chapters
    assert frankenstein[0].heading == "Letter 1"
    assert frankenstein[0].text.startswith("_To Mrs. Saville, England._")
    main_street = read_gutenberg(gutenberg_book(543)).chapters
    assert main_street[0].heading == "CHAPTER I I"
    assert main_street[0].text.startswith("ON a hill by the Mississippi")


@pytest.mark.parametrize(
    "lines",
    [
        ("I. In which the hero sets out", "II. In which he comes home", "III. In which all ends well"),
        ("1\nIn the garden", "2\nAt sea", "3\nHome again"),  # a number line, then a title in sentence case
        ("[I]", "[II]", "[III]"),
        ("— I —", "— II —", "— III —"),
        ("~ 1 ~", "~ 2 ~", "~ 3 ~"),
    ],
)
def test_plain_headings_are_not_refused(lines: tuple[str, ...]) -> None:
    text = "Title page\n\n\n" + book(*lines)
    spans = detect_chapters(text)
    assert [s.heading for s in spans] == [" ".join(line.split()) for line in lines]
    assert all(text[s.body_start :].startswith("The rain came down") for s in spans)


@pytest.mark.parametrize("gap", ["\n", "\n\n"])
def test_chapter_keyword_and_number_on_separate_lines(gap: str) -> None:
    text = "Title page\n\n\n" + book(*(f"CHAPTER{gap}{n}" for n in ("ONE", "TWO", "THREE")))
    assert headings(text) == ["CHAPTER ONE", "CHAPTER TWO", "CHAPTER THREE"]


def test_a_contents_list_under_a_lone_chapter_keyword_is_not_a_heading() -> None:
    contents = "CONTENTS\n\nCHAPTER\n     I.     MISS POLLY\n     II.    OLD TOM\n     III.   THE GAME\n\n\n"
    text = contents + book("CHAPTER I. MISS POLLY", "CHAPTER II. OLD TOM", "CHAPTER III. THE GAME")
    spans = detect_chapters(text)
    assert [s.heading for s in spans] == [
        "CHAPTER I. MISS POLLY",
        "CHAPTER II. OLD TOM",
        "CHAPTER III. THE GAME",
    ]
    assert spans[0].heading_start > len(contents) - 5


def test_a_numbered_prose_line_is_not_a_sentence_case_title() -> None:
    between = PROSE + "\n1. The man who kept the light had gone home, and the night came down.\n\n" + PROSE
    assert headings(book("CHAPTER I", "CHAPTER II", "CHAPTER III", between=between)) == [
        "CHAPTER I",
        "CHAPTER II",
        "CHAPTER III",
    ]


def test_bare_part_numbers_above_chapters_that_start_over() -> None:
    text = book(
        *(f"{part}\n\n\nCHAPTER I" if c == 0 else "CHAPTER II" for part in ("I", "II", "III") for c in (0, 1))
    )
    spans = detect_chapters(text)
    assert [s.heading for s in spans] == ["CHAPTER I", "CHAPTER II"] * 3
    assert [s.parts for s in spans] == [("I",), (), ("II",), (), ("III",), ()]


def test_a_part_label_opening_a_paragraph_is_not_a_unit() -> None:
    glued = "BOOK I. (Folio), CHAPTER III. (Fin-Back).—Under this head I reckon a monster which\n"
    text = book("CHAPTER I", "CHAPTER II", between=PROSE + "\n" + glued + PROSE * 14)
    assert headings(text) == ["CHAPTER I", "CHAPTER II"]


def test_chapter_titles_in_the_contents_are_not_units_where_they_recur_as_sections() -> None:
    contents = (
        "CONTENTS\n\n\nCHAPTER I\n\nHarker's Journal      1\n\nCHAPTER II\n\nSeward's Diary      14\n\n\n\n\n"
    )
    last_chapter = "CHAPTER II\n\n" + LONG_PROSE + "\n\nHARKER'S JOURNAL"  # a section after the last heading
    text = contents + book("CHAPTER I", last_chapter, between=LONG_PROSE)
    assert headings(text) == ["CHAPTER I", "CHAPTER II"]


def test_a_listed_title_between_chapters_that_follow_each_other_is_a_section() -> None:
    text = _contents("Mina's Journal", "Lucy's Letter") + book(
        "CHAPTER I", "MINA'S JOURNAL", "CHAPTER II", "LUCY'S LETTER", between=LONG_PROSE
    )
    assert headings(text) == ["CHAPTER I", "CHAPTER II", "LUCY'S LETTER"]


# ---------------------------------------------------------------------------
# shapes of untuned novels (issue 18 §1)

CHAPTER_PROSE = PROSE * 20  # a chapter's text: several hundred words
VERSE = (
    "Over the hill and over the sea the wind goes wandering, wandering free,\n"
    "And the gulls cry after it, white and grey, over the water and far away;\n"
    "And the boats come home when the tide is high, and the lamps are lit in the evening sky,\n"
    "And the old man sits by the harbour wall and counts the sails, and names them all.\n"
)


def _roman(value: int) -> str:
    return to_roman(value)


def _books_of_chapters_of_sections(
    per_book: tuple[int, ...],
    *,
    with_contents: bool,
    chapter: str = "CHAPTER {}",
    section: str = "roman-upper",
) -> tuple[str, list[str], list[tuple[str, ...]]]:
    """A novel laid out BOOK I / CHAPTER I / I, II …: chapter numbers start over in each BOOK and
    every chapter is cut into numbered sections, its first one right under the chapter heading."""
    pieces, expected, parts, contents = [], [], [], ["CONTENTS", ""]
    for b, chapters in enumerate(per_book, 1):
        book_heading = f"BOOK {_roman(b)}\n\nTHE {('FLIGHT', 'RETURN', 'HARVEST', 'WINTER')[b - 1]}"
        contents += [f"BOOK {_roman(b)}", ""]
        for c in range(1, chapters + 1):
            sections = [format_number(s, section) for s in range(1, 3 + (b + c) % 3)]
            heading = chapter.format(_roman(c))
            contents.append(heading)
            pieces.append(f"{book_heading}\n\n\n{heading}" if c == 1 else heading)
            pieces[-1] += f"\n\n{sections[0]}"
            pieces += sections[1:]
            # After a CHAPTER keyword, the first section's number goes with the heading.
            expected.append(f"{heading} {sections[0]}" if heading.startswith("CHAPTER") else heading)
            parts.append((" ".join(book_heading.split()),) if c == 1 else ())
        contents.append("")
    front = "THE LONG ROAD\n\nA NOVEL\n\n\n\n" + ("\n".join(contents) + "\n\n\n\n" if with_contents else "")
    return front + book(*pieces, between=CHAPTER_PROSE), expected, parts


@pytest.mark.parametrize("with_contents", [True, False])
@pytest.mark.parametrize(
    ("chapter", "section"),
    [("CHAPTER {}", "roman-upper"), ("CHAPTER {}.", "arabic"), ("{}.", "arabic")],
)
def test_chapters_inside_books_win_over_their_numbered_sections(
    with_contents: bool, chapter: str, section: str
) -> None:
    text, expected, parts = _books_of_chapters_of_sections(
        (5, 4, 6, 5), with_contents=with_contents, chapter=chapter, section=section
    )
    spans = detect_chapters(text)
    assert [s.heading for s in spans] == expected
    assert [s.parts for s in spans] == parts
    # The sections stay inside their chapter: chapter I of BOOK I holds its second and third sections.
    first = text[spans[0].body_start : spans[0].body_end]
    second, third = (format_number(n, section) for n in (2, 3))
    assert f"\n\n{second}\n\n" in first and f"\n\n{third}\n\n" in first
    assert chapter.format("II") not in first


def _novel_with_inner_runs(
    inner: dict[int, list[str]], chapters: int = 9, *, numbered_on: bool = False
) -> tuple[str, list[str]]:
    """A novel whose chapters are numbered "IV. THE TITLE"; inside the chapters named in ``inner``
    stand short units numbered again from I (a poem's stanzas, letters), each with its title if any;
    ``numbered_on``: the units of a later chapter go on with the numbers of the one before."""
    pieces, expected = [], []
    number = 0
    for c in range(1, chapters + 1):
        heading = f"{_roman(c)}. THE {('MORNING', 'NOON', 'EVENING')[c % 3]} OF THE {c}TH"
        pieces.append(f"{heading}\n\n{CHAPTER_PROSE}")
        expected.append(heading)
        number = number if numbered_on else 0
        for title in inner.get(c, []):
            number += 1
            pieces.append(f"{_roman(number)}.{'  ' + title if title else ''}\n\n{VERSE * 2}")
    return "THE HARBOUR\n\n\n\n" + "\n\n\n".join(pieces), expected


def test_numbered_verses_and_letters_inside_a_chapter_are_not_chapters() -> None:
    stanzas = ["", "", "", "", ""]  # I. … V. inside chapter IV: … III, IV, I, II, III, IV, V, V …
    letters = ["FROM MARGARET TO HER BROTHER", "HIS ANSWER", "THE LAST"]  # titled, inside chapter VII
    text, expected = _novel_with_inner_runs({4: stanzas, 7: letters})
    spans = detect_chapters(text)
    assert [s.heading for s in spans] == expected
    fourth = text[spans[3].body_start : spans[3].body_end]
    assert "\n\nV.\n\n" in fourth and "HIS ANSWER" in text[spans[6].body_start : spans[6].body_end]


def test_letters_numbered_on_in_the_next_chapter_are_not_chapters() -> None:
    # … III, IV, I, II, III, V, IV, V, VI …: letters I-III in chapter IV, IV-V in chapter V.
    letters = {4: ["TO HIS MOTHER", "HER ANSWER", "TO HIS BROTHER"], 5: ["HIS BROTHER'S ANSWER", "THE LAST"]}
    text, expected = _novel_with_inner_runs(letters, numbered_on=True)
    assert headings(text) == expected


def test_a_run_of_short_verses_as_long_as_the_chapters_before_is_inside_the_chapter() -> None:
    # IV, then stanzas I-IV, then V: the V that follows could continue either; the verses are short.
    text, expected = _novel_with_inner_runs({4: ["", "", "", ""]})
    assert headings(text) == expected


def test_short_verses_closing_the_last_chapter_are_inside_it() -> None:
    text, expected = _novel_with_inner_runs({9: ["", "", "", ""]})
    assert headings(text) == expected


@pytest.mark.parametrize("between", [CHAPTER_PROSE, PROSE], ids=["long", "short"])
def test_chapters_starting_over_without_a_part_heading_are_kept(between: str) -> None:
    # I-III, then I-V with no heading above: a level not recognised, not verses (those are shorter than
    # the chapters around them).
    text = book("I.", "II.", "III.", "I.", "II.", "III.", "IV.", "V.", between=between)
    assert headings(text) == ["I.", "II.", "III.", "I.", "II.", "III.", "IV.", "V."]


COMMA_TITLES = (
    "THE ARRIVAL AT THE MILL",
    "A WALK BY THE RIVER",
    "WHAT THE SQUIRE SAID TO THE PARSON,",
    "THE STORM",
    "IN WHICH THE SQUIRE, HAVING LOST HIS WAY,\n      FINDS IT AGAIN",
    "THE END OF IT",
)


def test_a_title_ending_with_a_comma_is_a_heading_where_the_contents_names_it() -> None:
    heads = [f"{_roman(n)}.   {title}" for n, title in enumerate(COMMA_TITLES, 1)]
    listed = [f"  {head.splitlines()[0]}{' ' * 6}{n * 17}" for n, head in enumerate(heads, 1)]
    contents = "THE SQUIRE\n\n\n\nCONTENTS\n\n" + "\n".join(listed) + "\n\n\n\n"
    text = contents + book(*heads, between=CHAPTER_PROSE)
    spans = detect_chapters(text)
    assert [s.heading for s in spans] == [" ".join(head.split()) for head in heads]
    # The chapter after the one before is no longer merged into it.
    assert "WHAT THE SQUIRE SAID" not in text[spans[1].body_start : spans[1].body_end]


def test_a_numbered_line_ending_with_a_comma_that_no_contents_names_is_prose() -> None:
    letter = "I.   THE HONOURABLE MEMBERS OF THE BOARD,\n\nGentlemen, I write to you in haste.\n\n"
    text = book("I.", "II.", "III.", between=CHAPTER_PROSE + "\n" + letter + CHAPTER_PROSE)
    assert headings(text) == ["I.", "II.", "III."]


@needs_corpus
def test_a_real_novel_regrouped_into_books_keeps_its_chapters_and_their_sections() -> None:
    """Main Street (pg543) has CHAPTER I … XXXIX, most cut into sections I, II …; set in three BOOKs
    (chapters 1-10, 11-24, 25-39, each book's last chapter ending in a section) with the chapter
    numbers starting over in each, it still has its 39 chapters, the sections inside them."""
    import re

    from longread.documents.gutenberg import _strip_licence
    from longread.files import read_text

    path = gutenberg_book(543)
    body = _strip_licence(read_text(path), path)[0]
    original = spans_to_chapters(body, detect_chapters(body))
    book_starts = (1, 11, 25)

    def regroup(match: re.Match[str]) -> str:
        value = next(v for v in range(1, 40) if to_roman(v) == match.group(1))
        book = sum(value >= start for start in book_starts)
        book_heading = f"BOOK {to_roman(book)}\n\n\n" if value in book_starts else ""
        return f"{book_heading}CHAPTER {to_roman(value - book_starts[book - 1] + 1)}\n"

    regrouped = re.sub(r"(?m)^CHAPTER ([IVXL]+)\n", regroup, body)
    assert regrouped.count("\nBOOK ") == 3
    chapters = spans_to_chapters(regrouped, detect_chapters(regrouped))
    assert [c.text for c in chapters] == [c.text for c in original]
    starts = {start - 1: f"BOOK {to_roman(n)}" for n, start in enumerate(book_starts, 1)}
    assert [c.parts for c in chapters] == [(starts[i],) if i in starts else () for i in range(39)]
