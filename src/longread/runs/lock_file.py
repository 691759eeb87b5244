"""The lock files (``locks/main.txt``, ``locks/vllm.txt`` in a checkout): what a venv holds, written as pip
constraints, and read back to compare with what is installed (``longread env``, the suite's lock test).

Every distribution is listed, pip and setuptools included; the project itself is not. This module uses
the standard library only, so ``make lock`` runs it by path with any Python:
``python src/longread/runs/lock_file.py PYTHON`` prints the lock of the venv ``PYTHON`` belongs to, and
``… --check LOCK PYTHON`` prints how that venv differs from ``LOCK`` (exit 1 if it does).
"""

from __future__ import annotations

import importlib.metadata
import json
import platform
import re
import subprocess
import sys
from pathlib import Path

PROJECT = "longread"


def canonical(name: str) -> str:
    """A distribution's name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_here() -> dict[str, str]:
    """``{canonical name: version}`` of every distribution this process can import but the project."""
    found: dict[str, str] = {}
    for distribution in importlib.metadata.distributions():
        name = distribution.metadata["Name"]
        if name:
            found.setdefault(canonical(name), distribution.version)
    found.pop(PROJECT, None)
    return found


def checkout_lock() -> Path | None:
    """``locks/main.txt`` of the checkout longread runs from (an editable install), or None (a wheel)."""
    lock = Path(__file__).resolve().parents[3] / "locks" / "main.txt"
    return lock if lock.is_file() else None


def installed(python: str | Path) -> dict[str, str]:
    """``{canonical name: version}`` of every distribution in ``python``'s environment but the project."""
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = {canonical(row["name"]): row["version"] for row in json.loads(listed)}
    found.pop(PROJECT, None)
    return found


def render(packages: dict[str, str], python: str | Path) -> str:
    version = subprocess.run(
        [str(python), "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    header = [
        "# Written by `make lock` (src/longread/runs/lock_file.py): every distribution of the venv the",
        "# suite passed on, as pip constraints (`pip install -c`).",
        f"# Python {version}, {platform.system()} {platform.machine()}.",
    ]
    return "\n".join([*header, *(f"{name}=={packages[name]}" for name in sorted(packages))]) + "\n"


def read(lock: Path) -> dict[str, str]:
    """``{canonical name: version}`` from a lock; a line not ``name==version`` is an error naming it."""
    pins: dict[str, str] = {}
    for number, line in enumerate(lock.read_text(encoding="utf-8").splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        name, sep, version = text.partition("==")
        if not sep or not name.strip() or not version.strip():
            raise ValueError(f"{lock}:{number}: {line!r} is not name==version; run `make lock` to rewrite it")
        pins[canonical(name.strip())] = version.strip()
    return pins


def differences(found: dict[str, str], pins: dict[str, str]) -> list[str]:
    """One line per distribution installed at another version, installed but not locked, or locked but
    not installed."""
    lines = []
    for name in sorted(found.keys() | pins.keys()):
        have, want = found.get(name), pins.get(name)
        if have == want:
            continue
        if want is None:
            lines.append(f"{name}=={have} is installed but not in the lock")
        elif have is None:
            lines.append(f"{name}=={want} is locked but not installed")
        else:
            lines.append(f"{name} is {have}, the lock says {want}")
    return lines


def main(argv: list[str]) -> int:
    if argv[:1] == ["--check"] and len(argv) == 3:
        lines = differences(installed(argv[2]), read(Path(argv[1])))
        print("\n".join(lines) or f"{argv[2]}: as {argv[1]}")
        return 1 if lines else 0
    if len(argv) == 1:
        sys.stdout.write(render(installed(argv[0]), argv[0]))
        return 0
    raise SystemExit("usage: python src/longread/runs/lock_file.py PYTHON | --check LOCK PYTHON")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
