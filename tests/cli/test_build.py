"""``longread build``: a setting the options give out of range is refused under the option's name."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from longread.cli.app import app
from tests.helpers import GUTENBERG, unboxed


def test_a_scene_length_out_of_range_names_its_option(tmp_path: Path) -> None:
    book = GUTENBERG / "pg1023.txt.gz"  # a real novel; the refusal comes before it is read
    result = CliRunner().invoke(
        app, ["build", "narrativexl", str(book), "--out", str(tmp_path / "nxl"), "--scene-chars", "10"]
    )
    assert result.exit_code == 2, result.output
    assert "--scene-chars: Input should be greater than or equal to 100 (given 10)" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "nxl").exists()  # refused before any model is loaded or file written


def test_a_negative_min_scenes_names_its_option(tmp_path: Path) -> None:
    book = GUTENBERG / "pg1023.txt.gz"  # a real novel; the refusal comes before it is read
    result = CliRunner().invoke(
        app, ["build", "narrativexl", str(book), "--out", str(tmp_path / "nxl"), "--min-scenes", "-1"]
    )
    assert result.exit_code == 2, result.output
    assert "--min-scenes:" in result.output and "(given -1)" in result.output


def test_exclude_remembered_leaves_those_books_out_and_says_which_and_why(tmp_path: Path) -> None:
    """Two real novels, one called remembered by a probe folder: the build is the other book's alone."""
    import json

    books = [GUTENBERG / "pg120.txt.gz", GUTENBERG / "pg84.txt.gz"]
    probes = tmp_path / "probes"
    probes.mkdir()
    verdicts = [
        {"book": "120", "title": "Treasure Island", "remembered": True, "notes": [],
         "scores": {"cloze": {"value": 0.5, "ci_low": 0.3, "ci_high": 0.7, "n": 30}}},
        {"book": "84", "title": "Frankenstein", "remembered": False, "notes": [],
         "scores": {"cloze": {"value": 0.0, "ci_low": 0.0, "ci_high": 0.1, "n": 30}}},
    ]  # fmt: skip
    (probes / "books.json").write_text(
        json.dumps({"model": {"spec": "smollm2"}, "rule": "cloze>=0.3", "books": verdicts})
    )
    common = ["--prefix-tokens", "256", "--suffix-tokens", "32", "--workers", "1", "--quiet"]
    result = CliRunner().invoke(
        app,
        ["build", "chapterbreak", *map(str, books), "--out", str(tmp_path / "cb.jsonl"), *common,
         "--exclude-remembered", str(probes)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "1 of the 2 books probed are remembered by smollm2 (120)" in result.output
    assert "books left out on purpose (1):" in result.output
    assert "book 120 (Treasure Island) left out: remembered by smollm2 (cloze 0.50; rule cloze>=0.3)" in (
        result.output
    )
    assert "from 1 of 2 books" in result.output and "skipped books" not in result.output
    alone = CliRunner().invoke(
        app, ["build", "chapterbreak", str(books[1]), "--out", str(tmp_path / "alone.jsonl"), *common]
    )
    assert alone.exit_code == 0, alone.output
    built = (tmp_path / "cb.jsonl").read_bytes()
    assert built == (tmp_path / "alone.jsonl").read_bytes() and b'"book_id":"84"' in built
    missing = CliRunner().invoke(
        app,
        ["build", "chapterbreak", str(books[1]), "--out", str(tmp_path / "x.jsonl"), *common,
         "--exclude-remembered", str(tmp_path)],
    )  # fmt: skip
    assert missing.exit_code != 0 and "not a memory probe's folder" in missing.output


def test_books_the_probes_cannot_tell_about_stay_unless_strict_memory(tmp_path: Path) -> None:
    """A "cannot tell" verdict is not "remembered": the book stays, and is named; --strict-memory leaves
    it out too."""
    import json

    books = [GUTENBERG / "pg120.txt.gz", GUTENBERG / "pg84.txt.gz"]
    probes = tmp_path / "probes"
    probes.mkdir()
    verdicts = [
        {"book": "120", "title": "Treasure Island", "remembered": False, "notes": [], "scores": {}},
        {"book": "84", "title": "Frankenstein", "remembered": "cannot tell", "notes": [], "scores": {}},
    ]
    (probes / "books.json").write_text(
        json.dumps({"model": {"spec": "smollm2"}, "rule": "extraction_exact>=0.05", "books": verdicts})
    )
    common = ["--prefix-tokens", "256", "--suffix-tokens", "32", "--workers", "1", "--quiet"]
    outputs = {}
    for strict in ([], ["--strict-memory"]):
        out = tmp_path / f"cb{len(strict)}.jsonl"
        result = CliRunner().invoke(
            app,
            ["build", "chapterbreak", *map(str, books), "--out", str(out), *common,
             "--exclude-remembered", str(probes), *strict],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert "the probes cannot tell for 1 (84)" in result.output
        outputs[bool(strict)] = (result.output, out.read_bytes())
    kept, left = outputs[False], outputs[True]
    assert b'"book_id":"84"' in kept[1] and "the probes cannot tell for 1 (84), kept" in kept[0]
    assert b'"book_id":"84"' not in left[1] and b'"book_id":"120"' in left[1]
    assert "left out: cannot tell for smollm2 (no score; rule extraction_exact>=0.05)" in left[0]
    alone = CliRunner().invoke(app, ["build", "chapterbreak", str(books[0]), "--strict-memory",
                                     "--out", str(tmp_path / "x.jsonl"), *common])  # fmt: skip
    said = unboxed(alone.output)
    assert alone.exit_code == 2 and "give --exclude-remembered PROBE_DIR with it" in said
