"""What ``--ray [ADDRESS]`` asks for, and how a command line spells it (no ``ray`` import here).

``--ray`` alone means a local Ray on this machine; ``--ray ADDRESS`` an existing cluster.
Click/Typer options cannot take an optional value, so the command line is normalised
before parsing (:func:`normalise_ray_args`): a ``--ray`` not followed by something that
looks like a Ray address becomes ``--ray=local``. A Ray address is ``auto``, ``local``,
``HOST:PORT`` or ``ray://HOST:PORT`` — a book path such as ``books/`` never is, so
``build chapterbreak --ray books/`` still reads ``books/`` as a book folder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

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

    @property
    def where(self) -> str:
        return self.address or "a local Ray"


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
    """``--ray`` followed by nothing, an option or a non-address becomes ``--ray=local``."""
    out: list[str] = []
    for index, arg in enumerate(args):
        if arg == "--":
            out.extend(args[index:])
            break
        if arg == "--ray":
            following = args[index + 1] if index + 1 < len(args) else None
            if following is None or not ADDRESS_PATTERN.match(following):
                out.append(f"--ray={LOCAL}")
                continue
        out.append(arg)
    return out
