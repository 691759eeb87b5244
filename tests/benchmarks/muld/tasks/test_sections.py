"""Sections of the real VLSP theses for the summarisation baseline (all 20 in ../shared)."""

from __future__ import annotations

import functools
import itertools
import re

import pytest

from longread.benchmarks.muld.tasks.sections import by_sections, find_sections, first_tokens, skip_kind
from longread.files import read_text
from longread.text.tokenizers import NamedTokenizer, load_tokenizer
from tests.helpers import SHARED, needs_shared

VLSP = SHARED / "corpus" / "vlsp"
THESES = sorted(VLSP.glob("*.main.txt.gz"))


@functools.cache
def thesis(name: str) -> str:
    return read_text(VLSP / f"{name}.main.txt.gz")


@pytest.fixture(scope="module")
def gpt2() -> NamedTokenizer:
    return load_tokenizer("gpt2")


@needs_shared
def test_all_twenty_theses_are_cut_into_sections_that_cover_them() -> None:
    assert len(THESES) == 20
    for path in THESES:
        document = thesis(path.name.removesuffix(".main.txt.gz"))
        sections = find_sections(document)
        assert sections[0].start == 0 and sections[-1].end == len(document), path.name
        for before, after in itertools.pairwise(sections):
            assert before.end == after.start, path.name
        kept = [s for s in sections if not s.skipped]
        assert len(kept) >= 4, path.name
        for section in kept:
            first_line = document[section.start : section.end].lstrip("\n").split("\n", 1)[0]
            # A section holds what it claims: it opens with its own heading line.
            assert first_line.startswith("#") and first_line.endswith(section.title.split(" / ")[0]), (
                first_line
            )


@needs_shared
def test_contents_and_lists_are_skipped_as_often_as_the_theses_have_them() -> None:
    for path in THESES:
        document = thesis(path.name.removesuffix(".main.txt.gz"))
        skipped = [s.kind for s in find_sections(document) if s.skipped]
        for kind, heading in [
            ("contents", "Contents"),
            ("list-of-figures", "List of Figures"),
            ("list-of-tables", "List of Tables"),
        ]:
            expected = len(re.findall(rf"^#+ {heading}$", document, re.MULTILINE))
            assert skipped.count(kind) == expected, (path.name, kind)


@needs_shared
def test_front_matter_of_a_thesis_is_skipped_and_chapters_kept() -> None:
    document = thesis("0708.1914v1")
    sections = find_sections(document)
    assert [(s.kind, s.title) for s in sections[:4]] == [
        ("contents", "Contents"),
        ("list-of-figures", "List of Figures"),
        ("list-of-tables", "List of Tables"),
        ("body", "Chapter 1 Introduction"),
    ]
    kept_text = "".join(document[s.start : s.end] for s in sections if not s.skipped)
    assert "-    1.1 Organization of this Thesis" not in kept_text  # a contents entry
    assert "### 1.1 Organization of this Thesis" in kept_text  # the real subsection


@needs_shared
def test_a_level_one_acknowledgement_does_not_swallow_the_thesis() -> None:
    document = thesis("0708.3354v1")  # "# Acknowledgements" above "## Chapter …"
    sections = find_sections(document)
    assert sections[0].kind == "acknowledgements" and sections[0].end - sections[0].start < 1000
    assert sections[1].kind == "contents"
    assert sections[2].title == "Chapter 1 Introduction"


@needs_shared
def test_a_bare_part_heading_joins_the_chapter_after_it() -> None:
    titles = [s.title for s in find_sections(thesis("0704.3907v1"))]
    assert (
        "Part I Entanglement and Relativistic Quantum Theory / Chapter 2 Dynamics of momentum "
        "entanglement in lowest-order QED" in titles
    )
    assert not any(title.startswith("Part") and " / " not in title for title in titles)


@needs_shared
def test_by_sections_cuts_each_section_to_the_budget_and_records_it(gpt2: NamedTokenizer) -> None:
    document = thesis("0709.3863v1")
    selection = by_sections(document, gpt2, 500)
    sections = find_sections(document)
    assert selection.n_units == len(sections)
    assert len(selection.kept) == sum(not s.skipped for s in sections)
    for span in selection.kept:
        section = sections[span.index]
        assert span.start == section.start and span.end <= section.end and span.label == section.title
        assert span.n_tokens == gpt2.count(document[span.start : span.end]) <= 500
        assert span.full_tokens == gpt2.count(document[section.start : section.end])
        assert span.cut == (span.end < section.end)
    assert any(span.cut for span in selection.kept)
    assert [note.split(":")[0] for note in selection.notes] == [
        "skipped acknowledgements",
        "skipped contents",
        "skipped list-of-figures",
        "skipped list-of-tables",
    ]
    assert selection.document_tokens == gpt2.count(document)


@needs_shared
def test_first_tokens_with_and_without_front_matter(gpt2: NamedTokenizer) -> None:
    document = thesis("0708.1914v1")
    plain = first_tokens(document, gpt2, 300)
    (span,) = plain.kept
    assert span.start == 0 and span.n_tokens == gpt2.count(document[: span.end]) <= 300 and span.cut
    assert document.startswith("##### Contents")
    body = first_tokens(document, gpt2, 300, after_front_matter=True)
    assert document[body.kept[0].start :].startswith("## Chapter 1 Introduction")
    assert body.notes == (
        f"skipped front matter: contents, list-of-figures, list-of-tables (chars 0-{body.kept[0].start})",
    )


@pytest.mark.parametrize(
    ("title", "kind"),
    [
        ("Acknowledgements. I would like to thank my thesis advisor, Prof.", "acknowledgements"),
        ("Acknowledgments", "acknowledgements"),
        ("Appendix A Glossary of Symbols and Notation", "glossary"),
        ("Bibliography", "references"),
        ("7 References", "references"),
        ("List of Symbols", "list-of-other"),
        ("Table of Contents", "contents"),
        ("2.1 Notation and Basic Tools", None),
        ("Chapter 5 Conclusion", None),
        ("Chapter 1 Introduction", None),
        ("Indexed families", None),
    ],
)
def test_skip_kinds_of_titles(title: str, kind: str | None) -> None:
    assert skip_kind(title) == kind


def test_a_document_without_headings_is_one_front_section(gpt2: NamedTokenizer) -> None:
    text = "We study things.\n\nMore things follow.\n"
    (section,) = find_sections(text)
    assert (section.kind, section.start, section.end) == ("front", 0, len(text))
    empty = by_sections("", gpt2, 100)
    assert empty.kept == () and empty.notes == ("no section left to summarise",)
