"""``longread build``: a setting the options give out of range is refused under the option's name."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from longread.cli.app import app
from tests.helpers import GUTENBERG


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
