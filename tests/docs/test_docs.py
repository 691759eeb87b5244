"""README.md and docs/ cannot rot: every `longread …` command they show parses with the real CLI (the
command and each flag it names exist), every relative link and backticked repository path exists, and
they hold no project history, no commit hash, no path outside the repository and no table cell a reader
cannot hold (over 300 characters)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main

from longread.cli.app import app
from tests.helpers import REPO_ROOT

PAGES = [REPO_ROOT / "README.md", REPO_ROOT / "CONTRIBUTING.md", *sorted((REPO_ROOT / "docs").rglob("*.md"))]
HISTORY = re.compile(r"\bissues? \d+|§|\bthis round\b|\bearlier rounds?\b|\bround \d+\b|\blast stop\b", re.I)
COMMIT = re.compile(r"(?<![\w/.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,12}(?![\w/.-])")
OUTSIDE = re.compile(r"(?<![\w.])(?:\.\./)+[\w.-]*|(?<![\w.])/(?:tmp|work|root|home)/")
LINK = re.compile(r"\]\(([^)\s]+)\)")
REPO_PATH = re.compile(r"`((?:src|tests|bench|docs|\.ci)/[^`\s]*|Makefile|pyproject\.toml|mkdocs\.yml)`")
PLACEHOLDER = re.compile(r"<[^>/]+>|\b[A-Z][A-Z_]+\b(?!\.(?:md|toml))|[^/]*…[^/]*")
"""A path's placeholder parts (``<name>``, ``NAME``, ``…``) stand for any name."""
MAX_CELL = 300


def _pages() -> list[Path]:
    return [page for page in PAGES if page.is_file()]


def _lines(page: Path) -> Iterator[tuple[int, str]]:
    yield from enumerate(page.read_text(encoding="utf-8").splitlines(), start=1)


def _where(page: Path, number: int) -> str:
    return f"{page.relative_to(REPO_ROOT)}:{number}"


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_no_history_commit_hash_or_outside_path(page: Path) -> None:
    found = []
    for number, line in _lines(page):
        for name, pattern in (("history", HISTORY), ("commit hash", COMMIT)):
            match = pattern.search(line)
            if match:
                found.append(f"{_where(page, number)}: {name} {match.group(0)!r}")
        found += [f"{_where(page, number)}: outside path {path!r}" for path in _outside(page, line)]
    assert found == []


def _outside(page: Path, line: str) -> list[str]:
    """Paths a line names that lie outside the repository (``../`` climbing out of it, /tmp …)."""
    out = []
    for match in OUTSIDE.finditer(line):
        path = match.group(0)
        if path.startswith("/") or not (page.parent / path).resolve().is_relative_to(REPO_ROOT):
            out.append(path)
    return out


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_table_cells_stay_short(page: Path) -> None:
    long = [
        f"{_where(page, number)}: a cell of {len(cell.strip())} characters"
        for number, line in _lines(page)
        if line.lstrip().startswith("|")
        for cell in line.strip().strip("|").split(" | ")
        if len(cell.strip()) > MAX_CELL
    ]
    assert long == []


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_links_and_repository_paths_exist(page: Path) -> None:
    missing = []
    for number, line in _lines(page):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            if not path.exists():
                missing.append(f"{_where(page, number)}: link {target}")
        for name in REPO_PATH.findall(line):
            clean = PLACEHOLDER.sub("*", name.rstrip(".,:;"))
            if not list(REPO_ROOT.glob(clean)) and not (REPO_ROOT / clean).exists():
                missing.append(f"{_where(page, number)}: path {name}")
    assert missing == []


def _commands(page: Path) -> Iterator[tuple[int, str]]:
    """Every `longread …` a page shows: lines of code blocks and inline code that start with it."""
    in_code = False
    for number, line in _lines(page):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            stripped = line.strip().lstrip("$ ")
            if stripped.startswith("longread "):
                yield number, stripped.split(" # ")[0].split("  #")[0]
        else:
            for inline in re.findall(r"`(longread [^`]+)`", line):
                yield number, inline


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _problems(command: str, root: Any) -> list[str]:
    """What of ``command`` the CLI does not have (typer's click: a group has ``commands``). A command
    word with alternatives (``chapterbreak|narrativexl``) or a placeholder (``muld/TASK``) is checked as
    every command it names."""
    return _check([w for w in _words(command)[1:] if w != "--help"], root, ["longread"])


def _check(words: list[str], current: Any, path: list[str]) -> list[str]:
    if hasattr(current, "commands") and words and not words[0].startswith("-"):
        name, rest = words[0], words[1:]
        names = [part for part in name.split("|") if part]
        chosen = []
        for part in names:
            pattern = re.compile("^" + re.sub(r"[A-Z][A-Z_]+", r"[\\w-]+", re.escape(part)) + "$")
            chosen += [sub for sub in current.commands if pattern.match(sub)]
        if not chosen:
            return [f"no command {' '.join([*path, name])!r}"]
        return [problem for sub in chosen for problem in _check(rest, current.commands[sub], [*path, sub])]
    if hasattr(current, "commands"):  # a group named on its own is fine; its flags are not
        return [f"{' '.join(path)} needs a subcommand before {words[0]}"] if words else []
    options = {opt for param in current.params for opt in [*param.opts, *param.secondary_opts]}
    return [
        f"{' '.join(path)} has no option {flag}"
        for word in words
        for flag in re.findall(r"(?:^|[\[(|])(--?[a-zA-Z][\w-]*)", word)
        if flag not in options and flag != "--help"
    ]


def test_every_command_shown_exists_with_every_flag_it_names() -> None:
    root = typer.main.get_command(app)
    found, problems = 0, []
    for page in _pages():
        for number, command in _commands(page):
            found += 1
            problems += [f"{_where(page, number)}: {p} — {command}" for p in _problems(command, root)]
    assert found > 30, "the pages show commands"
    assert problems == []


def test_the_checks_find_what_they_look_for() -> None:
    root = typer.main.get_command(app)
    assert _problems("longread eval chapterbreak --data x --nope 3", root) == [
        "longread eval has no option --nope"
    ]
    assert _problems("longread evaluate x", root) == ["no command 'longread evaluate'"]
    assert (
        _problems("longread build chapterbreak|narrativexl BOOKS… --out D --exclude-remembered P", root) == []
    )
    assert _problems("longread build muld/TASK --source S --out F [--bogus]", root)[0].endswith("--bogus")
    assert HISTORY.search("as issue 18 §7 asked") and HISTORY.search("in this round")
    assert COMMIT.search("see a632c2e") and not COMMIT.search("sha256 of 'abc'")
    assert _outside(REPO_ROOT / "README.md", "see ../shared/corpus/gutenberg") == ["../shared"]
    assert _outside(REPO_ROOT / "docs" / "memory.md", "[readme](../README.md)") == []
    assert _outside(REPO_ROOT / "README.md", "written to /tmp/out") == ["/tmp/"]


def test_the_cli_reference_is_the_code() -> None:
    from longread.cli.reference import cli_reference

    page = (REPO_ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert page == cli_reference(), "docs/cli.md differs from the commands: run `make docs-cli`"
    assert "## longread probe memory" in page and "`--exclude-remembered`" in page


def test_every_page_is_in_the_site_navigation() -> None:
    config = (REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s*([\w-]+\.md)\s*$", config, re.M))
    pages = {page.name for page in (REPO_ROOT / "docs").glob("*.md")}
    assert pages == listed


MEASURED = re.compile(r"(?<![\w.])(?:\d+\.\d+×|\d\.\d+e-\d+)(?![\w])")
"""A measured ratio or difference (``5.29×``, ``9.6e-5``): the figures a reader must find once."""
TARGETS = re.compile(r"(?:≤|<|goal|target|limit)\s*\S*$")


def test_each_measured_ratio_or_difference_lives_on_one_page() -> None:
    """Within docs/ a measured ratio or difference is stated on one page and linked from the others (the
    README's headline figures link to their page; a goal such as "≤ 1.2×" is not a measurement)."""
    pages: dict[str, set[str]] = {}
    for page in sorted((REPO_ROOT / "docs").glob("*.md")):
        if page.name == "cli.md":
            continue
        text = page.read_text(encoding="utf-8")
        for match in MEASURED.finditer(text):
            if not TARGETS.search(text[max(0, match.start() - 12) : match.start()]):
                pages.setdefault(match.group(0), set()).add(page.name)
    twice = {figure: sorted(names) for figure, names in pages.items() if len(names) > 1}
    assert twice == {}
