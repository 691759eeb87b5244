"""The ``longread`` command: one subcommand per job. Thin: it parses options and calls the library.

This module only assembles. Each command group lives in its own module with its own module-level
``typer.Typer()`` and top-level command functions: ``eval``, ``info`` (stats, models, tasks),
``report``, ``read``, ``demo``; the groups ``build`` (with MuLD's builders from ``muld``),
``convert`` and ``train``. A group added here without a name lends its commands to the root
(``longread eval``); with a name it is a subcommand group (``longread build chapterbreak``).
``longread --help`` lists the root's commands in the order they are added.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperGroup

from longread.cli.ablate import ablate_app
from longread.cli.build import build_app
from longread.cli.calibrate import calibrate_app
from longread.cli.convert import convert_app
from longread.cli.demo import demo_app
from longread.cli.demo_long import demo_long_app
from longread.cli.env import env_app
from longread.cli.eval import eval_app
from longread.cli.export import export_app
from longread.cli.horizon import horizon_app
from longread.cli.info import info_app
from longread.cli.interrupts import exit_code, received, signal_name, stop_on_signals
from longread.cli.muld import muld_app
from longread.cli.presses import presses_app
from longread.cli.probe import probe_app
from longread.cli.read import read_app
from longread.cli.report import report_app
from longread.cli.train import train_app
from longread.scaleout.ray_options import normalise_ray_args


class _LongreadGroup(TyperGroup):
    """The root command: ``--ray`` alone is read as ``--ray=local`` (see ``scaleout.ray_options``)."""

    def main(self, args: Sequence[str] | None = None, *rest: Any, **options: Any) -> Any:
        return super().main(
            normalise_ray_args(sys.argv[1:] if args is None else list(args)), *rest, **options
        )


app = typer.Typer(
    cls=_LongreadGroup,
    help="longread: does a language model really use what it read thousands of tokens ago?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(eval_app)  # longread eval
app.add_typer(info_app)  # longread stats | models | tasks | books
app.add_typer(env_app)  # longread env
app.add_typer(report_app)  # longread report
app.add_typer(ablate_app)  # longread ablate
app.add_typer(calibrate_app)  # longread calibrate
app.add_typer(presses_app)  # longread presses
app.add_typer(horizon_app)  # longread horizon
app.add_typer(read_app)  # longread read
app.add_typer(demo_app)  # longread demo | demo-narrativexl
app.add_typer(demo_long_app)  # longread demo-long
build_app.add_typer(muld_app)  # longread build muld/TASK, after chapterbreak and narrativexl
app.add_typer(build_app, name="build")
app.add_typer(convert_app, name="convert")
app.add_typer(train_app, name="train")
app.add_typer(export_app, name="export")
app.add_typer(probe_app, name="probe")


def main() -> None:
    """Run the command; stopped by SIGINT, SIGTERM or SIGHUP, it has unwound (what it started is
    stopped, finished rows kept) and exits with 128 + the signal's number."""
    stop_on_signals()
    try:
        app()
    except KeyboardInterrupt as interrupt:  # raised outside a command (typer turns the rest into 130)
        _say_interrupted(exit_code(interrupt), signal_name(interrupt))
    except SystemExit as done:
        if received and done.code == INTERRUPTED_BY_TYPER:
            _say_interrupted(exit_code(), signal_name())
        raise


INTERRUPTED_BY_TYPER = 130


def _say_interrupted(code: int, name: str) -> None:
    typer.echo(f"interrupted ({name}): stopped what it had started", err=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
