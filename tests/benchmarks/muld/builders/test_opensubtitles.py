"""OpenSubtitles EN→DE builder on files in OPUS's layout (raw release + de-en cesAlign alignment).

``tests/data/muld/opensubtitles`` holds a hand-written film in OPUS's raw
format (``<s id>`` with ``<time>`` marks, ``<meta>``) in English and German,
and an alignment in OPUS's de-en direction with 1:1, 2:1, 1:0 and 0:1 links,
a second subtitle pair of the same film and a film whose files are absent.
No real subtitles are in ../shared: the length filter is lowered for the
records and its default shown to drop the short film.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from longread.benchmarks.muld.builders.opensubtitles import build_opensubtitles
from longread.benchmarks.muld.builders.opensubtitles_xml import read_subtitles
from longread.benchmarks.muld.builders.report import LengthFilter
from longread.benchmarks.muld.records import read_records
from longread.errors import BadInputError
from tests.helpers import TEST_DATA

SAMPLE = TEST_DATA / "muld" / "opensubtitles"
ALIGNMENT = SAMPLE / "alignments.de-en.xml"
RAW = SAMPLE / "raw"
LOW = LengthFilter(min_tokens=20)


def test_one_film_one_record_line_by_line(tmp_path: Path) -> None:
    out = tmp_path / "opensubtitles.jsonl.bz2"
    report = build_opensubtitles(ALIGNMENT, RAW, out, length_filter=LOW)
    records = read_records(out).records
    assert len(records) == 1
    record = records[0][1]
    assert record.input.split("\n") == [
        "Who goes there at this late hour?",
        "Only a traveller, sir.",
        "I have come from Wisborg. The roads were bad.",
        "You must be tired.",
        "Sleep now, the count will see you tomorrow.",
        "- Good night.",
    ]
    assert record.output[0].split("\n") == [
        "Wer ist da zu dieser späten Stunde?",
        "Nur ein Reisender, mein Herr.",
        "Ich komme aus Wisborg, die Straßen waren schlecht.",
        "Ihr müsst müde sein.",
        "Schlaft jetzt, der Graf empfängt Euch morgen.",
        "- Gute Nacht.",
    ]
    meta = record.metadata_json()
    assert meta["id"] == "1922/13442" and meta["film_id"] == "13442" and meta["year"] == "1922"
    assert meta["source_file"] == "en/1922/13442/3182201.xml.gz"
    assert meta["lines"] == 6
    # counted in the EN→DE direction although OPUS's file is de-en
    assert meta["links_by_type"] == {"0:1": 1, "1:0": 1, "1:1": 5, "2:1": 1}
    assert (meta["unaligned_source"], meta["unaligned_target"]) == (1, 1)
    assert meta["overlap"] == {"links_without_overlap": 1, "min": 0.874, "mean": 0.929, "max": 0.981}
    assert meta["tokenised"] is False
    dropped = {entry["item"]: entry["reason"] for entry in report.dropped}
    assert dropped["en/1922/13442/3182201.xml.gz → de/1922/13442/2998766.xml.gz"] == (
        "another subtitle pair of film 1922/13442: "
        "en/1922/13442/3182201.xml.gz → de/1922/13442/2998765.xml.gz used"
    )
    assert dropped["1927/17136"].startswith("subtitle file missing:")


def test_default_filter_drops_the_short_film_and_bytes_are_stable(tmp_path: Path) -> None:
    out = tmp_path / "default.jsonl"
    report = build_opensubtitles(ALIGNMENT, RAW, out)
    reasons = {entry["item"]: entry["reason"] for entry in report.dropped}
    assert reasons["1922/13442"].startswith("too short:") and "< 10000" in reasons["1922/13442"]
    saved = json.loads(out.with_name("default.report.json").read_text())
    assert saved["settings"]["tokenizer"] == "gpt2" and saved["kept"] == 0
    first, second = tmp_path / "a.jsonl.bz2", tmp_path / "b.jsonl.bz2"
    build_opensubtitles(ALIGNMENT, RAW, first, length_filter=LOW)
    build_opensubtitles(ALIGNMENT, RAW, second, length_filter=LOW)
    assert first.read_bytes() == second.read_bytes()


def test_gzipped_release_and_en_de_direction_read_alike(tmp_path: Path) -> None:
    root = tmp_path / "raw"
    for source in sorted(RAW.rglob("*.xml")):
        target = root / source.relative_to(RAW).with_suffix(".xml.gz")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(gzip.compress(source.read_bytes(), mtime=0))
    swapped = tmp_path / "en-de.xml.gz"
    text = ALIGNMENT.read_text()
    group = text.split("<linkGrp", 2)[1]
    links = [line for line in group.splitlines() if "<link " in line]
    reversed_links = []
    for line in links:
        left, right = line.split('xtargets="')[1].split('"')[0].split(";")
        reversed_links.append(line.replace(f'xtargets="{left};{right}"', f'xtargets="{right};{left}"'))
    swapped.write_bytes(
        gzip.compress(
            (
                '<?xml version="1.0" encoding="utf-8"?>\n<cesAlign version="1.0">\n'
                '<linkGrp targType="s" fromDoc="en/1922/13442/3182201.xml.gz" '
                'toDoc="de/1922/13442/2998765.xml.gz">\n'
                + "\n".join(reversed_links)
                + "\n</linkGrp>\n</cesAlign>\n"
            ).encode()
        )
    )
    plain, zipped = tmp_path / "plain.jsonl", tmp_path / "zipped.jsonl"
    build_opensubtitles(ALIGNMENT, RAW, plain, length_filter=LOW)
    build_opensubtitles(swapped, root, zipped, length_filter=LOW)
    assert zipped.read_bytes() == plain.read_bytes()


def test_tokenised_release_is_read_word_by_word(tmp_path: Path) -> None:
    path = tmp_path / "tokenised.xml"
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<document id="1">\n<s id="1">\n'
        '<time id="T1S" value="00:00:01,000" />\n<w id="1.1">Only</w>\n<w id="1.2">a</w>\n'
        '<w id="1.3">traveller</w>\n<w id="1.4">,</w>\n<w id="1.5">sir</w>\n<w id="1.6">.</w>\n'
        '<time id="T1E" value="00:00:02,000" />\n</s>\n</document>\n'
    )
    subtitles = read_subtitles(path)
    assert subtitles.tokenised and subtitles.sentences == {"1": "Only a traveller , sir ."}


def test_broken_files_name_the_file_and_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.de-en.xml"
    text = ALIGNMENT.read_text()
    broken.write_text(
        text.replace('<link id="SL4" xtargets="4;5" overlap="0.955" />', '<link id="SL4" xtargets="4;5"')
    )
    with pytest.raises(BadInputError) as caught:
        build_opensubtitles(broken, RAW, tmp_path / "out.jsonl", length_filter=LOW)
    assert "broken.de-en.xml, line 9" in str(caught.value) and "broken XML" in str(caught.value)
    # a broken subtitle file drops its film with the reason; the build goes on
    root = tmp_path / "raw"
    shutil.copytree(RAW, root)
    german = root / "de" / "1922" / "13442" / "2998765.xml"
    german.write_text(german.read_text().replace('</s>\n  <s id="4">', '\n  <s id="4">', 1))
    report = build_opensubtitles(ALIGNMENT, root, tmp_path / "out.jsonl", length_filter=LOW)
    reasons = {entry["item"]: entry["reason"] for entry in report.dropped}
    assert reasons["1922/13442"].startswith("subtitle file unreadable:")
    assert "2998765.xml, line" in reasons["1922/13442"]
    # a link naming a sentence the file does not have
    bad_ids = tmp_path / "ids.de-en.xml"
    bad_ids.write_text(text.replace('xtargets="6;7"', 'xtargets="6;70"'))
    report = build_opensubtitles(bad_ids, RAW, tmp_path / "out.jsonl", length_filter=LOW)
    reasons = {entry["item"]: entry["reason"] for entry in report.dropped}
    assert reasons["1922/13442"] == "alignment names sentence(s) 70 absent from the subtitle files"
