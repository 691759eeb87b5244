"""How many CPU threads torch uses: all this process may use, unless --threads or $LONGREAD_THREADS say."""

from __future__ import annotations

import os


def default_threads() -> int:
    """All CPUs this process may use; ``$LONGREAD_THREADS`` overrides.

    Deliberately not adapted to the current load: the thread count can change the
    last bits of float sums, and a resumed run must score like an uninterrupted
    one. On a busy shared machine pass ``--threads 1`` (measured here: 2 threads
    beside one busy process ran a forward ~3x slower than 1 thread).
    """
    env = os.environ.get("LONGREAD_THREADS")
    if env:
        return max(1, int(env))
    return len(os.sched_getaffinity(0))


def set_threads(threads: int | None) -> int:
    import torch

    chosen = threads if threads is not None else default_threads()
    torch.set_num_threads(max(1, chosen))
    return torch.get_num_threads()
