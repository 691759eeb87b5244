"""Character archetype builder on IMSDb-style script pages and a labels CSV.

``tests/data/muld/archetype`` holds one short hand-written script page in
IMSDb's layout (navigation, a script tag, the script in ``<pre>``) and a labels
CSV; the long script is made at test time by putting a real novel from
../shared (Treasure Island) into the same page layout.
"""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

import pytest

from longread.benchmarks.muld.builders.archetype import build_archetype, find_mentions, normalise_label
from longread.benchmarks.muld.builders.report import LengthFilter
from longread.benchmarks.muld.records import read_records
from longread.errors import BadInputError
from longread.files import read_text
from tests.helpers import TEST_DATA, gutenberg_book, needs_shared

SAMPLE = TEST_DATA / "muld" / "archetype"
PAGE = (SAMPLE / "scripts" / "Night-Watch.html").read_text()


def imsdb_page(title: str, script: str) -> str:
    """The sample page's layout around another script (escaped as the site escapes it)."""
    head, rest = PAGE.split("<pre>", 1)
    return (
        head.replace("Night Watch", title)
        + "<pre>\n"
        + html.escape(script)
        + "\n</pre>"
        + rest.split("</pre>", 1)[1]
    )


def make_sources(folder: Path, with_long_script: bool = True) -> tuple[Path, Path]:
    shutil.copytree(SAMPLE, folder)
    if with_long_script:
        novel = read_text(gutenberg_book(120))
        (folder / "scripts" / "Treasure-Island.html").write_text(imsdb_page("Treasure Island", novel))
    return folder / "scripts", folder / "labels.csv"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("archetype")
    scripts, labels = make_sources(root / "sources")
    out = root / "character_id.jsonl.bz2"
    build_archetype(scripts, labels, out)
    return root, out


@needs_shared
def test_one_record_per_labelled_character_with_normalised_label(built: tuple[Path, Path]) -> None:
    _, out = built
    records = [record for _, record in read_records(out).records]
    rows = [(r.metadata_json()["character"], r.output, r.metadata_json()["source_label"]) for r in records]
    assert rows == [
        ("Jim Hawkins", ("Hero",), "Protagonist"),
        ("Long John Silver", ("Villain",), "Villain"),
        ("Captain Smollett", ("Hero",), "hero"),
    ]
    first = records[0]
    assert first.input.startswith("Jim Hawkins\n\n")
    script = first.input.split("\n\n", 1)[1]
    assert "TREASURE ISLAND" in script and "All Scripts" not in script and "advert" not in script
    assert "&amp;" not in script  # entities are resolved
    meta = first.metadata_json()
    assert meta["id"] == "Treasure-Island.html:Jim Hawkins" and meta["script"] == "Treasure-Island.html"
    assert meta["matched_as"] == "Jim Hawkins" and meta["mentions"] >= 1


@needs_shared
def test_every_dropped_row_has_its_reason_and_line(built: tuple[Path, Path]) -> None:
    _, out = built
    report = json.loads(out.with_name("character_id.report.json").read_text())
    assert report["settings"]["tokenizer"] == "gpt2" and report["settings"]["min_tokens"] == 10_000
    dropped = {entry["item"]: (entry["line"], entry["reason"]) for entry in report["dropped_items"]}
    assert dropped["Treasure-Island.html:Squire Trelawney"] == (
        4,
        "unknown label: 'Sidekick' (not Hero/Protagonist/Villain/Antagonist)",
    )
    assert dropped["Treasure-Island.html:Darth Vader"] == (
        5,
        "character never mentioned in the script: 'Darth Vader'",
    )
    assert dropped["Night-Watch.html:Anna Kessler"][1].startswith("too short:")
    assert "< 10000" in dropped["Night-Watch.html:The Warden"][1]
    assert dropped["Alien.html:Ellen Ripley"][1].startswith("script file missing: no 'Alien.html'")


@needs_shared
def test_same_sources_same_bytes(built: tuple[Path, Path], tmp_path: Path) -> None:
    root, out = built
    again = tmp_path / "again.jsonl.bz2"
    build_archetype(root / "sources" / "scripts", root / "sources" / "labels.csv", again)
    assert again.read_bytes() == out.read_bytes()


def test_short_script_with_lower_minimum_and_headings_in_capitals(tmp_path: Path) -> None:
    scripts, labels = make_sources(tmp_path / "sources", with_long_script=False)
    out = tmp_path / "out.jsonl"
    build_archetype(scripts, labels, out, length_filter=LengthFilter(min_tokens=50))
    records = [record for _, record in read_records(out).records]
    assert [(r.metadata_json()["character"], r.output[0]) for r in records] == [
        ("Anna Kessler", "Hero"),
        ("The Warden", "Villain"),
    ]
    script = records[0].input.split("\n\n", 1)[1]
    # the script's own layout (indented headings and dialogue) is kept
    assert script.startswith(" " * 30 + "NIGHT WATCH\n") and script.endswith(" " * 40 + "FADE OUT.")
    assert "Nobody\n          comes up here but me & the gulls." in script
    assert records[1].metadata_json()["mentions"] == 3  # THE WARDEN, THE WARDEN (heading), the Warden's


def test_labels_and_name_matching_rules() -> None:
    assert [normalise_label(x) for x in ("Hero", " protagonist ", "ANTAGONIST", "villain", "Mentor")] == [
        "Hero",
        "Hero",
        "Villain",
        "Villain",
        None,
    ]
    script = "RIPLEY\n     Get away from her!\nThe alien hisses at Ripley."
    assert find_mentions("Ellen Ripley", script) == ("Ripley", 2)
    assert find_mentions("Al", "ALIEN attacks.") is None  # whole words only


def test_missing_column_is_an_error_and_a_bad_row_is_dropped(tmp_path: Path) -> None:
    scripts, labels = make_sources(tmp_path / "sources", with_long_script=False)
    labels.write_text("script,character,role\nNight-Watch.html,Anna Kessler,Hero\n")
    with pytest.raises(BadInputError) as caught:
        build_archetype(scripts, labels, tmp_path / "out.jsonl")
    assert "labels.csv, line 1" in str(caught.value) and "label" in str(caught.value)
    rows = [
        "script,character,label",
        'Night-Watch.html,"Anna, Kessler",Hero,extra',
        "Night-Watch.html,The Warden,Villain",
    ]
    labels.write_text("\n".join(rows) + "\n")
    report = build_archetype(
        scripts, labels, tmp_path / "out.jsonl", length_filter=LengthFilter(min_tokens=50)
    )
    assert report.dropped == [
        {"item": "labels.csv:2", "reason": "bad row: 4 fields where the header has 3", "line": 2}
    ]
    assert [entry["item"] for entry in report.kept] == ["Night-Watch.html:The Warden"]
