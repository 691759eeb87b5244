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
from typing import Any

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


INSTALL_RECORD = "longread-install.json"
"""Written by ``make`` into each venv it builds: the lock and the extras that venv was installed from."""


def install_record(prefix: str | Path | None = None) -> dict[str, Any] | None:
    """The venv's install record (``{"lock": "locks/presses.txt", "extras": ["dev"], …}``), or None where
    ``make`` did not build this environment."""
    path = Path(prefix if prefix is not None else sys.prefix) / INSTALL_RECORD
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("lock"), str) else None


def venv_lock() -> tuple[Path, list[str] | None] | None:
    """The lock this venv was installed from and its extras (None: every extra), in the checkout longread
    runs from; without an install record, ``locks/main.txt`` and every extra; None outside a checkout."""
    root = Path(__file__).resolve().parents[3]
    record = install_record()
    if record is not None:
        lock = root / record["lock"]
        extras = record.get("extras")
        return (
            (lock, [str(e) for e in extras] if isinstance(extras, list) else None) if lock.is_file() else None
        )
    main = checkout_lock()
    return None if main is None else (main, None)


def required(extras: list[str]) -> set[str]:
    """Canonical names of every distribution the project needs with ``extras``: its requirements whose
    markers hold, and theirs, as installed here (a requirement not installed is named, not followed)."""
    from packaging.requirements import Requirement

    needed: set[str] = set()
    todo: list[tuple[str, tuple[str, ...]]] = [(PROJECT, tuple(extras))]
    while todo:
        name, wanted = todo.pop()
        try:
            requirements = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for text in requirements:
            requirement = Requirement(text)
            environments = [{"extra": e} for e in wanted] or [{"extra": ""}]
            if requirement.marker is not None and not any(
                requirement.marker.evaluate(e) for e in environments
            ):
                continue
            key = canonical(requirement.name)
            if key not in needed:
                needed.add(key)
                todo.append((requirement.name, tuple(requirement.extras)))
    return needed


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


def differences(found: dict[str, str], pins: dict[str, str], needed: set[str] | None = None) -> list[str]:
    """One line per distribution installed at another version, installed but not locked, or locked but
    not installed (with ``needed``, only where this install's extras need it: a venv made with the
    ``dev`` extra alone lacks the test extras' packages by design)."""
    lines = []
    for name in sorted(found.keys() | pins.keys()):
        have, want = found.get(name), pins.get(name)
        if have == want:
            continue
        if want is None:
            lines.append(f"{name}=={have} is installed but not in the lock")
        elif have is None:
            if needed is None or name in needed:
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
