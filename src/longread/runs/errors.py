"""Errors of the run directory; each names the run directory and says what to do."""

from __future__ import annotations

import errno
from pathlib import Path

from longread.errors import LongreadError


class RunDirError(LongreadError):
    """A run directory cannot be created, resumed or written."""

    def __init__(self, path: str | Path, problem: str, hint: str = "") -> None:
        self.path = str(path)
        message = f"{self.path}: {problem}"
        if hint:
            message += f" — {hint}"
        super().__init__(message)


class RunExistsError(RunDirError):
    """The run directory already holds a run and neither resume nor overwrite was asked for."""


class ConfigMismatchError(RunDirError):
    """Resuming a run with a configuration that would give other results."""

    def __init__(self, path: str | Path, differences: dict[str, tuple[object, object]]) -> None:
        self.differences = differences
        shown = "; ".join(
            f"{key}: {_short(old)} → {_short(new)}" for key, (old, new) in sorted(differences.items())
        )
        hint = "resume with the same model, data and settings, or start a new run directory"
        if any(key.endswith("weights_fingerprint") for key in differences):
            hint += (
                "; weights are fingerprinted by their content alone now (before, the file's "
                "name was part of it), so a run made earlier names another fingerprint even for the same "
                "file: start a new run directory for it"
            )
        super().__init__(path, f"cannot resume: this run was made with another configuration ({shown})", hint)


class RunWriteError(LongreadError):
    """Writing to the run directory failed (disk full, I/O error); finished rows are intact."""

    def __init__(self, path: str | Path, reason: str, stored: int) -> None:
        self.path = str(path)
        self.reason = reason
        self.stored = stored
        super().__init__(
            f"{reason} while writing {self.path}; {stored} samples are safely stored; "
            "free space (or fix the cause) and rerun with --resume"
        )


def write_failure_reason(exc: OSError) -> str:
    """ "disk full" for a full disk or quota, else the system's words."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "disk full"
    return f"error ({exc.strerror or exc})"


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
