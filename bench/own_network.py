"""Re-run a bench script in network and process namespaces of its own (loopback only; needs root).

Ray reaches out of the machine unless kept in (OFFLINE.md); the Ray benches call
:func:`stay_in_own_network` first: outside the namespace it re-runs the script inside
one (usage stats off) and exits with its code; inside it returns.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

INSIDE = "LONGREAD_BENCH_NETNS"


def stay_in_own_network() -> None:
    if os.environ.get(INSIDE) == "1":
        return
    command = shlex.join([sys.executable, *sys.argv])
    env = {**os.environ, INSIDE: "1", "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
    # No exec: the shell stays the namespace's first process and reaps the orphans Ray leaves.
    namespaces = ["unshare", "-n", "-p", "-f", "--mount-proc", "--kill-child"]
    done = subprocess.run([*namespaces, "sh", "-c", f"ip link set lo up && {command}; exit $?"], env=env)
    raise SystemExit(done.returncode)
