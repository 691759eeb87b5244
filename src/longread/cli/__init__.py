"""The ``longread`` command: one subcommand per job. Thin: it parses options and calls the library."""

from __future__ import annotations

from longread.cli.app import app, main

__all__ = ["app", "main"]
