"""Children that die with their parent: the kernel's parent-death signal, set in the child.

``PR_SET_PDEATHSIG`` asks Linux to send a signal to a process when the thread that forked it ends —
whether the parent exits, raises, or is killed with SIGKILL. :func:`dying_with_parent` returns a
``preexec_fn`` for :class:`subprocess.Popen` (or a ``multiprocessing`` initializer) that sets it and
then checks that the parent has not already gone in between (then the child exits at once).

Stdlib only: :mod:`longread.processes.guard` imports it as a script. Elsewhere than Linux nothing is
set (the signal does not exist there); callers still stop their children themselves on a normal exit.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
from collections.abc import Callable
from functools import partial

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36

_libc: ctypes.CDLL | None = None
if sys.platform.startswith("linux"):
    # Loaded once in the parent: after fork the child only calls it (no allocation, no import).
    _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _prctl(option: int, value: int) -> bool:
    if _libc is None:
        return False
    return int(_libc.prctl(option, value, 0, 0, 0)) == 0


def set_parent_death_signal(signum: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send ``signum`` to this process when its parent (thread) ends; False where
    the platform cannot."""
    return _prctl(PR_SET_PDEATHSIG, int(signum))


def become_subreaper() -> bool:
    """Orphaned descendants of this process are re-parented to it (not to init), so it can end them."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def dying_with_parent(signum: int = signal.SIGKILL) -> Callable[[], None]:
    """A ``preexec_fn`` / pool initializer (picklable): the child gets ``signum`` when its parent ends.

    The parent's pid is taken now, in the parent; in the child, if the parent is already gone (it ended
    between ``fork`` and this call, so the signal will never come), the child exits at once."""
    return partial(die_with, os.getpid(), int(signum))


def die_with(parent: int, signum: int = signal.SIGKILL) -> None:
    """In a child of ``parent``: get ``signum`` when ``parent`` ends; exit now if it already has."""
    set_parent_death_signal(signum)
    if os.getppid() != parent:
        os._exit(1)
