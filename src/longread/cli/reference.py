"""The CLI reference page (``docs/cli.md``), made from the typer app itself.

``python -m longread.cli.reference > docs/cli.md`` (``make docs-cli``) writes it; a test fails when the
page and the code differ, so the reference never drifts from the commands.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import typer.main

from longread.cli.app import app

HEADER = """# CLI reference

Every `longread` command with its arguments and options, made from the code
(`python -m longread.cli.reference > docs/cli.md`; a test keeps the two equal). `longread COMMAND --help`
prints the same in a terminal.
"""


def cli_reference() -> str:
    """The page: one section per command, in the order `longread --help` lists them."""
    root = typer.main.get_command(app)
    parts = [HEADER]
    for path, command in _commands(root, ["longread"]):
        parts.append(_section(path, command))
    return "\n".join(parts)


def _commands(group: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
    for name in group.list_commands(None):  # type: ignore[arg-type]
        command = group.get_command(None, name)  # type: ignore[arg-type]
        if command is None or getattr(command, "hidden", False):
            continue
        if hasattr(command, "commands"):
            yield from _commands(command, [*path, name])
        else:
            yield [*path, name], command


def _section(path: list[str], command: Any) -> str:
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    options = [p for p in command.params if p.param_type_name == "option" and p.name != "help"]
    usage = " ".join([*path, *(_argument(p) for p in arguments), "[OPTIONS]" if options else ""]).strip()
    lines = [f"## {' '.join(path)}", "", _help(command.help), "", "```", usage, "```", ""]
    for param in arguments:
        lines.append(f"- `{_argument(param)}`: {_one_line(param.help)}")
    for param in options:
        lines.append(f"- {_option(param)}")
    return "\n".join(lines).rstrip() + "\n"


def _help(text: str | None) -> str:
    return inspect.cleandoc(text or "").split("\n\n")[0].replace("\n", " ").strip() or "(no help)"


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def _argument(param: Any) -> str:
    name = param.name.upper()
    if param.nargs == -1:
        name += "…"
    return name if param.required else f"[{name}]"


def _option(param: Any) -> str:
    names = ", ".join(f"`{opt}`" for opt in [*param.opts, *param.secondary_opts])
    default = param.default
    shown = ""
    if not param.is_flag and default not in (None, (), []) and not callable(default):
        shown = f" (default `{default}`)"
    elif param.is_flag and default is True and not param.secondary_opts:
        shown = " (on by default)"
    return f"{names}{shown}: {_one_line(param.help)}".rstrip(": ")


if __name__ == "__main__":
    print(cli_reference(), end="")
