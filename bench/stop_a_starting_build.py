"""Stop a ChapterBreak build with SIGTERM as its worker processes start, many times: how many end?

Starts ``longread build chapterbreak BOOKS --workers 2`` again and again, sends SIGTERM a random
instant (0 to ``--spread`` seconds) after both workers have forked, and counts the builds that end
within ``--patience`` seconds (exit 143) against those that hang (then it prints their stacks with
py-spy when it is installed, and kills them). Run it on a slowed CPU to widen the race, e.g. on 0.3 of
one core under a cgroup quota.

    python bench/stop_a_starting_build.py BOOKS --trials 20
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from longread.processes.tree import descendants


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("books", help="a folder of books with chapters")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--spread", type=float, default=0.02, help="latest SIGTERM after the fork (s)")
    parser.add_argument("--patience", type=float, default=30.0, help="seconds before a build counts as hung")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    draw = random.Random(args.seed)
    ended = hung = 0
    with tempfile.TemporaryDirectory() as out:
        for trial in range(args.trials):
            command = [
                sys.executable, "-m", "longread.cli", "build", "chapterbreak", args.books,
                "--out", str(Path(out) / f"cb{trial}.jsonl"), "--workers", "2",
            ]  # fmt: skip
            build = subprocess.Popen(command, stderr=subprocess.DEVNULL)
            while len(descendants(build.pid)) < 2 and build.poll() is None:
                time.sleep(0.01)
            time.sleep(draw.uniform(0, args.spread))
            build.send_signal(signal.SIGTERM)
            try:
                build.wait(timeout=args.patience)
                ended += 1
                print(f"trial {trial}: ended, exit {build.returncode}", flush=True)
            except subprocess.TimeoutExpired:
                hung += 1
                print(f"trial {trial}: HUNG; its processes: {descendants(build.pid)}", flush=True)
                if shutil.which("py-spy"):
                    subprocess.run(["py-spy", "dump", "--pid", str(build.pid)], check=False)
                for pid in descendants(build.pid):
                    os.kill(pid, signal.SIGKILL)
                build.kill()
                build.wait()
    print(f"{ended} of {args.trials} ended, {hung} hung")
    raise SystemExit(1 if hung else 0)


if __name__ == "__main__":
    main()
