"""Stopping a command: SIGINT (Ctrl-C), SIGTERM (a scheduler's time limit, ``kill``) and SIGHUP (a closed
terminal) all unwind the command as a :class:`KeyboardInterrupt` would, so every ``finally`` runs — a
Ray this command started stops, a build's worker processes are killed, a server it started is ended —
and finished rows stay where the append-only logs put them. The exit code is 128 + the signal's number.
"""

from __future__ import annotations

import signal
from pathlib import Path
from types import FrameType

import typer

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Each turned into :class:`Interrupted` (a ``KeyboardInterrupt``)."""
received: list[int] = []
"""The stop signals this process has received (typer turns an interrupt into exit code 130 before
:func:`longread.cli.app.main` sees it; this says which signal it was)."""


class Interrupted(KeyboardInterrupt):
    """The command was stopped by a signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_interrupted(signum: int, _frame: FrameType | None) -> None:
    received.append(signum)
    # Once is enough: a second signal while unwinding must not cut a ``finally`` short.
    for stop in STOP_SIGNALS:
        signal.signal(stop, signal.SIG_IGN)
    raise Interrupted(signum)


def stop_on_signals() -> None:
    """Install the handlers (main thread only, as Python requires)."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, _raise_interrupted)


def signal_name(interrupt: KeyboardInterrupt | None = None) -> str:
    return signal.Signals(_signum(interrupt)).name


def exit_code(interrupt: KeyboardInterrupt | None = None) -> int:
    return 128 + _signum(interrupt)


def _signum(interrupt: KeyboardInterrupt | None) -> int:
    if isinstance(interrupt, Interrupted):
        return interrupt.signum
    return received[0] if received else int(signal.SIGINT)


def interrupted_run(interrupt: KeyboardInterrupt, out: Path, rows_file: Path) -> typer.Exit:
    """Say what was kept and how to go on, then exit: the message of an interrupted ``eval``."""
    try:
        with rows_file.open("rb") as rows:
            kept = sum(1 for line in rows if line.endswith(b"\n"))
    except OSError:
        kept = 0
    typer.echo(
        f"\ninterrupted ({signal_name(interrupt)}): {kept} finished sample(s) are kept in {rows_file}. "
        f"Run the same command with --resume to continue where it stopped (the run in {out}).",
        err=True,
    )
    return typer.Exit(code=exit_code(interrupt))


class RunAnnouncer:
    """For a command that makes several runs (ablate, calibrate, presses): names each run as it starts
    (``[2/5] snapkv-0.5: PATH``) and remembers it, so an interruption says which run kept what."""

    def __init__(self, out: Path) -> None:
        self.current = out

    def __call__(self, index: int, total: int, name: str, path: Path) -> None:
        self.current = path
        typer.echo(f"[{index}/{total}] {name}: {path}", err=True)

    def interrupted(self, interrupt: KeyboardInterrupt) -> typer.Exit:
        from longread.runs.layout import SAMPLES_FILE

        return interrupted_run(interrupt, self.current, self.current / SAMPLES_FILE)
