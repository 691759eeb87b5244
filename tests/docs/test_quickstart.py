"""The quickstart's commands run as written, in an empty folder, with the installed `longread`."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT

QUICKSTART = REPO_ROOT / "docs" / "quickstart.md"


def _tested_blocks(page: Path) -> list[str]:
    """The commands of the code blocks a page marks ``<!-- tested: … -->``."""
    text = page.read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- tested: [\w-]+ -->\s*```\w*\n(.*?)```", text, re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


@pytest.mark.slow
def test_the_quickstart_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The marked block: `longread books`, a ChapterBreak build, an evaluation and its report (each command
    in this process, in the empty folder; the installed command itself: tests/test_wheel.py)."""
    from typer.testing import CliRunner

    from longread.cli.app import app

    commands = _tested_blocks(QUICKSTART)
    assert len(commands) >= 4 and all(command.startswith("longread ") for command in commands)
    monkeypatch.chdir(tmp_path)
    for command in commands:
        done = CliRunner().invoke(app, shlex.split(command)[1:])
        assert done.exit_code == 0, f"{command}\n{done.output[-2000:]}\n{done.exception!r}"
    assert (tmp_path / "cb.jsonl").stat().st_size > 0
    assert (tmp_path / "runs" / "smollm2" / "results.json").is_file()
    assert (tmp_path / "report" / "memory_curve.png").is_file()
