"""What ``--ray [ADDRESS]`` asks for, and how a command line spells it (no ``ray`` import here).

``--ray`` alone means a local Ray on this machine; ``--ray ADDRESS`` an existing cluster.
Click/Typer options cannot take an optional value, so the command line is normalised
before parsing (:func:`normalise_ray_args`): a ``--ray`` followed by nothing, by an option or
by a path that exists (``build chapterbreak --ray books/``) becomes ``--ray=local``; any
other word after it is taken as the address and checked (a Ray address is ``auto``,
``local``, ``HOST:PORT`` or ``ray://HOST:PORT``), so a mistyped address is an error, never
a local Ray started by surprise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from longread.errors import LongreadError

LOCAL = "local"
"""The value ``--ray`` takes alone: start a Ray on this machine."""

ADDRESS_PATTERN = re.compile(r"^(auto|local|(ray://)?[A-Za-z0-9_.\-\[\]:]+:\d{1,5})$")


@dataclass(frozen=True)
class RayOptions:
    """Where to run and how wide: ``address`` None starts a local Ray. ``workers``: model replicas (None:
    one per GPU for a CUDA model, else 2), or the CPUs of a local Ray for a book-sharded build."""

    address: str | None = None
    workers: int | None = 2

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 1:
            raise LongreadError(f"Ray needs at least 1 worker, got {self.workers}")


def ray_options(value: str | None, workers: int | None) -> RayOptions | None:
    """The options ``--ray VALUE`` and ``--ray-workers N`` name; None without ``--ray``."""
    if value is None:
        return None
    if not ADDRESS_PATTERN.match(value):
        raise LongreadError(
            f"--ray {value!r} is not a Ray address: give HOST:PORT, ray://HOST:PORT or auto, "
            "or --ray alone for a local Ray"
        )
    return RayOptions(address=None if value == LOCAL else value, workers=workers)


def normalise_ray_args(args: Sequence[str]) -> list[str]:
    """``--ray`` followed by nothing, an option or an existing path becomes ``--ray=local``."""
    out: list[str] = []
    for index, arg in enumerate(args):
        if arg == "--":
            out.extend(args[index:])
            break
        if arg == "--ray":
            following = args[index + 1] if index + 1 < len(args) else None
            if following is None or following.startswith("-") or _is_path(following):
                out.append(f"--ray={LOCAL}")
                continue
        out.append(arg)
    return out


def _is_path(word: str) -> bool:
    """An existing file or folder (and not also an address: ``HOST:PORT`` files are not books)."""
    return not ADDRESS_PATTERN.match(word) and Path(word).exists()
