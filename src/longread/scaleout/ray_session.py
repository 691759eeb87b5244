"""Starting, joining and leaving Ray; what Ray raises when a worker is gone.

A local Ray gets usage stats off (``RAY_USAGE_STATS_ENABLED=0``: otherwise its
usage-stats process reaches out, OFFLINE.md), no dashboard, and a temporary
directory of its own, removed when this process stops it. An existing cluster is
joined at its address as it is. ``import ray`` happens here, and only when called.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from longread.errors import LongreadError

RAY_MISSING = (
    "Ray is not installed: pip install 'longread[ray]' (or 'ray[default]==2.60.*'); `make test` installs it"
)
RAY_ENVIRONMENT = {
    "RAY_USAGE_STATS_ENABLED": "0",
    # Each Ray worker runs one tokenizer thread: the parallelism is across workers.
    "TOKENIZERS_PARALLELISM": "false",
}
"""Set (unless already set) before Ray starts or is joined; local workers inherit them."""
LOCAL_RAY_ENVIRONMENT = {"RAY_AUTH_MODE": "disabled"}
"""Set (unless already set) only for a local Ray: a cluster keeps the authentication it was started with."""

_local_temp_dirs: list[str] = []
"""Temp dirs of the local Rays this process started (removed by :func:`stop_ray`)."""


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`LongreadError` saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise LongreadError(RAY_MISSING) from exc
    return ray


def start_ray(address: str | None, num_cpus: int) -> Any:
    """Connect to the cluster at ``address``, or start a local Ray with ``num_cpus`` and no dashboard.

    An already initialised Ray is used as it is.
    """
    for name, value in RAY_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    ray = import_ray()
    if not ray.is_initialized():
        if address:
            try:
                ray.init(address=address, log_to_driver=False)
            except Exception as exc:  # ConnectionError, TimeoutError, a missing client extra …
                raise LongreadError(
                    f"cannot join the Ray cluster at {address}: {type(exc).__name__}: {exc} — check the "
                    "address (`ray status` on the head node prints it) or use --ray alone for a local Ray"
                ) from None
        else:
            for name, value in LOCAL_RAY_ENVIRONMENT.items():
                os.environ.setdefault(name, value)
            # Short, under the system temp dir: Ray's socket paths must stay short.
            temp_dir = tempfile.mkdtemp(prefix="lr-ray-")
            _local_temp_dirs.append(temp_dir)
            ray.init(num_cpus=num_cpus, include_dashboard=False, _temp_dir=temp_dir, log_to_driver=False)
    return ray


def stop_ray() -> None:
    """Disconnect from Ray (a local Ray this process started stops) and remove the local temp dirs.

    Nothing to do when Ray was never imported (``--ray`` failed before Ray could start, or Ray is
    not installed: the error that said so stays the one the user sees)."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()
    while _local_temp_dirs:
        shutil.rmtree(_local_temp_dirs.pop(), ignore_errors=True)


@contextmanager
def ray_session(address: str | None, num_cpus: int) -> Iterator[Any]:
    """Ray for the duration of a block: started (or joined) here and left at the end, unless it was
    already up when the block began (then whoever started it stops it)."""
    ray = import_ray()
    owner = not ray.is_initialized()
    ray = start_ray(address, num_cpus)
    try:
        yield ray
    finally:
        if owner:
            stop_ray()


def death_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """What Ray raises when the worker doing a task is gone: killed, crashed, out of memory, node lost."""
    errors = ray.exceptions
    return (errors.RayActorError, errors.WorkerCrashedError, errors.OutOfMemoryError, errors.NodeDiedError)


def death_cause(error: BaseException) -> str:
    """One line saying why a worker died: the error's type and the first line of Ray's message."""
    first_line = next((line.strip() for line in str(error).splitlines() if line.strip()), "")
    return f"{type(error).__name__}: {first_line}" if first_line else type(error).__name__
