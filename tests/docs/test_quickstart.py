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
def test_the_quickstart_runs_as_written(tmp_path: Path) -> None:
    """The marked block: `longread books`, a ChapterBreak build, an evaluation and its report."""
    import subprocess
    import sys

    commands = _tested_blocks(QUICKSTART)
    assert len(commands) >= 4 and all(command.startswith("longread ") for command in commands)
    for command in commands:
        words = shlex.split(command)
        done = subprocess.run(
            [sys.executable, "-m", "longread.cli", *words[1:]],
            cwd=tmp_path, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        assert done.returncode == 0, f"{command}\n{done.stderr[-2000:]}"
    assert (tmp_path / "cb.jsonl").stat().st_size > 0
    assert (tmp_path / "runs" / "smollm2" / "results.json").is_file()
    assert (tmp_path / "report" / "memory_curve.png").is_file()
