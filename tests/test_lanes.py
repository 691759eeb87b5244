"""``make test``'s runner (tests/lanes.py): both lanes and the checks beside them decide the exit status,
and what a failing check printed is shown. Real nested pytest runs of two quick tests, one per lane."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import REPO_ROOT

MAIN_TEST = "tests/test_function_length.py::test_a_long_function_is_found_nested_or_async"
SERVERS_TEST = "tests/scaleout/test_ray_build.py::test_ray_options_name_what_is_wrong"


def _lanes(checks: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "tests.lanes", "--checks", checks, MAIN_TEST, SERVERS_TEST]
    return subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)


def test_passing_lanes_and_checks_pass_and_each_lane_ran_its_own_test() -> None:
    done = _lanes("sh -c 'echo every check passed'")
    assert done.returncode == 0, done.stdout[-3000:]
    assert done.stdout.count("1 passed") == 2  # one test in each lane
    assert "tests: the checks passed" in done.stdout
    assert done.stdout.index("the servers lane ===") < done.stdout.index("every check passed")
    assert "main lane exit 0, servers lane exit 0, checks exit 0" in done.stdout


def test_a_failing_check_fails_the_run_and_its_output_is_shown() -> None:
    done = _lanes("sh -c 'echo src/x.py:1: an error a check found; exit 3'")
    assert done.returncode == 3, done.stdout[-3000:]
    assert "tests: the checks FAILED (exit 3)" in done.stdout
    assert "src/x.py:1: an error a check found" in done.stdout
    assert "main lane exit 0, servers lane exit 0, checks exit 3" in done.stdout
