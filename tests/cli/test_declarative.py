"""The ``longread`` command is declared, not built at run time: every command is a module-level
function of a module under ``longread.cli`` (no ``register()`` closures), every command of this
list is there (a new one may join), and MuLD's build commands are exactly the rows of
``cli.muld.MULD_BUILDERS``."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from longread.benchmarks.muld.builders.opensubtitles import build_opensubtitles
from longread.benchmarks.muld.builders.report import LengthFilter
from longread.cli.app import app
from longread.cli.export import MULD_EXPORTS, export_muld
from longread.cli.muld import MULD_BUILDERS, MuldBuilder, build_muld
from tests.helpers import TEST_DATA, unboxed

OPENSUBTITLES = TEST_DATA / "muld" / "opensubtitles"

EXPECTED = {
    "eval",
    "stats",
    "models",
    "tasks",
    "report",
    "read",
    "demo",
    "demo-narrativexl",
    "build",
    "build chapterbreak",
    "build narrativexl",
    "build muld/vlsp",
    "build muld/style-change",
    "build muld/narrativeqa",
    "build muld/hotpotqa",
    "build muld/character-archetype",
    "build muld/opensubtitles",
    "export muld/vlsp",
    "export muld/narrativeqa",
    "export muld/hotpotqa",
    "convert",
    "convert chapterbreak",
    "convert muld-to-pan",
    "convert pan-to-muld",
    "train",
    "train suffixlm",
    "train style-pairs",
}


def commands(command: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """(``"build chapterbreak"``, click command) for every command and group below the root."""
    command = typer.main.get_command(app) if command is None else command
    for name, sub in getattr(command, "commands", {}).items():
        yield " ".join([*path, name]), sub
        yield from commands(sub, (*path, name))


def declared(callback: Callable[..., Any]) -> Callable[..., Any]:
    """The function a command was declared with, under typer's wrapper (and a bound ``partial``)."""
    target = inspect.unwrap(callback)
    return target.func if isinstance(target, partial) else target


def test_every_expected_command_is_there() -> None:
    assert EXPECTED - {name for name, _ in commands()} == set()


def test_every_command_is_a_module_level_function_of_the_cli_package() -> None:
    for name, command in commands():
        if command.callback is None:  # a group (build, convert, train) has no function of its own
            assert hasattr(command, "commands"), name
            continue
        function = declared(command.callback)
        assert "<locals>" not in function.__qualname__, f"{name} is declared inside a function"
        assert function.__module__.startswith("longread.cli."), name
        module = inspect.getmodule(function)
        assert getattr(module, function.__qualname__) is function, f"{name}: not a module-level name"


def test_muld_export_commands_are_the_rows_of_their_table_one_to_one() -> None:
    built = {
        name.removeprefix("export "): command
        for name, command in commands()
        if name.startswith("export muld/") and name != "export muld/style-change"
    }
    # Style change is exported as multiple choice for a language model: its own command, no window.
    assert list(built) == list(MULD_EXPORTS)
    for task, help_text in MULD_EXPORTS.items():
        callback = inspect.unwrap(built[task].callback)
        assert isinstance(callback, partial) and callback.func is export_muld and callback.args == (task,)
        options = [parameter.name for parameter in built[task].params]
        assert options == ["data", "to", "out", "tokenizer", "max_length", "option", "overwrite"]
        assert built[task].help == help_text


def test_muld_build_commands_are_the_rows_of_the_table_one_to_one() -> None:
    built = {
        name.removeprefix("build "): command for name, command in commands() if name.startswith("build muld/")
    }
    assert list(built) == [builder.command_name for builder in MULD_BUILDERS]
    for builder in MULD_BUILDERS:
        callback = inspect.unwrap(built[builder.command_name].callback)
        assert isinstance(callback, partial) and callback.func is build_muld
        assert callback.args == (builder,)
        options = [parameter.name for parameter in built[builder.command_name].params]
        own = [parameter.name for parameter in builder.options()]
        assert options == ["source", "out", "min_tokens", "tokenizer", *own]
        assert built[builder.command_name].help == builder.help != ""


def test_a_row_adds_a_command_with_the_adapters_options_and_help() -> None:
    def adapter(sources: Any, out: Path, length_filter: Any, *, lines: int = 3) -> Any:
        """A builder made up here."""

    made_up = MuldBuilder("made-up", adapter)
    assert list(made_up.signature().parameters) == ["source", "out", "min_tokens", "tokenizer", "lines"]
    assert made_up.command_name == "muld/made-up" and made_up.help == "A builder made up here."


def test_a_generated_command_passes_its_own_options_to_the_builder(tmp_path: Path) -> None:
    alignment, raw = OPENSUBTITLES / "alignments.de-en.xml", OPENSUBTITLES / "raw"
    by_hand = tmp_path / "by_hand.jsonl"
    build_opensubtitles(alignment, raw, by_hand, min_overlap=0.9, length_filter=LengthFilter(min_tokens=20))
    out = tmp_path / "cli.jsonl"
    result = CliRunner().invoke(
        app,
        ["build", "muld/opensubtitles", "--source", str(alignment), "--source", str(raw), "--out", str(out),
         "--min-tokens", "20", "--min-overlap", "0.9"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"wrote {out} (+ report beside it)" in result.output
    assert out.read_bytes() == by_hand.read_bytes() and out.stat().st_size > 0
    saved = json.loads(out.with_name("cli.report.json").read_text())
    assert saved == json.loads(by_hand.with_name("by_hand.report.json").read_text())
    default = tmp_path / "default_overlap.jsonl"
    result = CliRunner().invoke(
        app,
        ["build", "muld/opensubtitles", "--source", str(alignment), "--source", str(raw), "--out",
         str(default), "--min-tokens", "20"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert default.read_bytes() != out.read_bytes(), "--min-overlap 0.9 must change what is kept"


@pytest.mark.parametrize("builder", [b for b in MULD_BUILDERS if b.sources > 1], ids=lambda b: b.name)
def test_too_few_sources_name_what_the_command_needs(builder: MuldBuilder, tmp_path: Path) -> None:
    given = ["--source", str(tmp_path)] * (builder.sources - 1)
    result = CliRunner().invoke(
        app, ["build", builder.command_name, *given, "--out", str(tmp_path / "out.jsonl")]
    )
    assert result.exit_code == 2
    said = unboxed(result.output)  # the message as one line, out of its box
    assert f"give {builder.source_names} as --source, in that order" in said
    assert not (tmp_path / "out.jsonl").exists()
