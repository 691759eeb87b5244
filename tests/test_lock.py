"""The installs are the lock's: the venv the suite runs on holds exactly ``locks/main.txt`` (``make install``
and the test extras install with it as constraints), vLLM's venv exactly ``locks/vllm.txt``; the lock
keeps the ranges ``pyproject.toml`` states; and ``longread env`` says whether an install is the lock's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from longread.models.served.vllm_process import vllm_python
from longread.runs.lock_file import (
    canonical,
    differences,
    install_record,
    installed,
    installed_here,
    read,
    required,
)
from tests.helpers import REPO_ROOT

LOCK, VLLM_LOCK = REPO_ROOT / "locks" / "main.txt", REPO_ROOT / "locks" / "vllm.txt"
PRESSES_LOCK = REPO_ROOT / "locks" / "presses.txt"


def test_the_suite_runs_on_exactly_the_locked_versions() -> None:
    assert differences(installed_here(), read(LOCK)) == []
    # the same answer through pip, as `make lock` reads a venv
    assert differences(installed(sys.executable), read(LOCK)) == []


def test_the_vllm_venv_is_its_lock() -> None:
    assert differences(installed(vllm_python()), read(VLLM_LOCK)) == []


def test_the_presses_venv_is_its_lock_with_kvpress_and_the_transformers_it_accepts() -> None:
    from tests.presses import presses_python

    pinned = read(PRESSES_LOCK)
    assert differences(installed(str(presses_python())), pinned) == []
    assert pinned["kvpress"] == "0.5.5" and pinned["transformers"] == "5.2.0"


def _requirements(extras: bool = True) -> list[Requirement]:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    optional = [item for group in project["optional-dependencies"].values() for item in group]
    return [Requirement(text) for text in [*project["dependencies"], *(optional if extras else [])]]


def test_the_lock_keeps_the_stated_ranges_and_every_range_has_an_upper_bound() -> None:
    pins = read(LOCK)
    for requirement in _requirements():
        name = canonical(requirement.name)
        assert name in pins, f"{requirement} is not in {LOCK.name}: run `make lock`"
        assert requirement.specifier.contains(pins[name], prereleases=True), (requirement, pins[name])
    for requirement in _requirements(extras=False):
        operators = {spec.operator for spec in requirement.specifier}
        # `pip install longread` (the wheel) must not pull an untested major release
        assert operators & {"<", "==", "~="}, f"{requirement} has no upper bound"
    transformers = next(r for r in _requirements() if r.name == "transformers")
    assert not transformers.specifier.contains("6.0.0")
    assert transformers.specifier.contains(pins["transformers"])


def test_a_lock_line_that_is_not_a_pin_is_named(tmp_path: Path) -> None:
    lock = tmp_path / "main.txt"
    lock.write_text("# header\ntorch==2.13.0\nnumpy>=2\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"main.txt:3: 'numpy>=2' is not name==version"):
        read(lock)
    assert differences({"torch": "2.13.0", "extra": "1"}, {"torch": "2.12.0", "gone": "2"}) == [
        "extra==1 is installed but not in the lock",
        "gone==2 is locked but not installed",
        "torch is 2.13.0, the lock says 2.12.0",
    ]


def test_longread_env_prints_the_record_and_the_lock_check() -> None:
    env = {**os.environ, "PYTHONWARNINGS": "error::DeprecationWarning:longread"}
    done = subprocess.run(
        [sys.executable, "-m", "longread.cli", "env", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    record = json.loads(done.stdout)
    libraries = record["software"]["libraries"]
    assert libraries["transformers"] == read(LOCK)["transformers"]
    assert libraries["torch"] == read(LOCK)["torch"]
    assert record["lock"]["file"] == str(LOCK) and record["lock"]["differences"] == []
    assert record["compute"]["threads"] >= 1
    text = subprocess.run(
        [sys.executable, "-m", "longread.cli", "env"], capture_output=True, text=True, check=True
    ).stdout
    assert f"transformers  {libraries['transformers']}" in text
    assert "every installed distribution is at its locked version" in text


def test_longread_env_in_the_presses_venv_reads_the_presses_lock_and_finds_no_difference() -> None:
    """Each venv make builds records the lock and extras it came from; env compares with that lock."""
    from tests.presses import presses_python

    python = presses_python()
    record = install_record(python.parent.parent)
    assert record is not None and record["lock"] == "locks/presses.txt" and record["extras"] == []
    command = [str(python), "-m", "longread.cli", "env", "--json"]
    done = subprocess.run(
        command, capture_output=True, text=True, check=True, env=os.environ | {"HF_HUB_OFFLINE": "1"}
    )
    lock = json.loads(done.stdout)["lock"]
    assert lock["file"] == str(PRESSES_LOCK) and lock["differences"] == [], lock["differences"][:5]


def test_a_venv_made_with_the_dev_extra_alone_is_not_told_it_misses_the_test_extras() -> None:
    pins = read(LOCK)
    dev, everything = required(["dev"]), required(["dev", "bench", "browser", "ray"])
    assert "ray" in everything and "ray" not in dev and "torch" in dev and dev < everything
    found = {
        name: version for name, version in installed_here().items() if name in dev | {"pip", "setuptools"}
    }
    assert differences(found, pins, dev) == []
    missing = differences(found, pins)  # compared with every extra, the test extras' packages are "missing"
    assert f"ray=={pins['ray']} is locked but not installed" in missing


def test_make_names_pytorchs_cpu_index_for_torch_and_writes_each_lock_once() -> None:
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert "TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu" in makefile
    for venv in ("$(BIN)/python", "$(VLLM_VENV)/bin/python", "$(PRESSES_VENV)/bin/python"):
        assert f"$(call torch,{venv}," in makefile, venv  # every venv's torch step can reach that index
    planned = subprocess.run(
        ["make", "-n", "lock"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    for lock in (LOCK, VLLM_LOCK, PRESSES_LOCK):
        assert planned.stdout.count(f"> locks/{lock.name}.new") == 1, lock.name
    # every scratch venv upgrades pip the same way, so the locks agree on it (make lock, run twice, agrees)
    assert len({read(lock)["pip"] for lock in (LOCK, VLLM_LOCK, PRESSES_LOCK)}) == 1


def test_every_pin_but_torch_resolves_from_the_registry_without_this_machines_pip_configuration(
    tmp_path: Path,
) -> None:
    """With the image's pip configuration hidden (no find-links, no local index), each lock's pins resolve
    from the package registry alone (a dry run, no install); torch's CPU build comes from PyTorch's own
    index (the Makefile names it, tested above)."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    environment |= {"PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    runs = []
    for lock in (LOCK, VLLM_LOCK, PRESSES_LOCK):
        pins = tmp_path / lock.name
        pins.write_text(
            "".join(f"{n}=={v}\n" for n, v in read(lock).items() if n != "torch"), encoding="utf-8"
        )
        report = tmp_path / f"{lock.stem}.json"
        command = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed",
                   "-q", "-r", str(pins), "--report", str(report)]  # fmt: skip
        runs.append(
            (lock, report, subprocess.Popen(command, env=environment, stderr=subprocess.PIPE, text=True))
        )
    for lock, report, process in runs:
        _, errors = process.communicate(timeout=900)
        assert process.returncode == 0, f"{lock.name}: {errors[-2000:]}"
        resolved = {canonical(item["metadata"]["name"]) for item in json.loads(report.read_text())["install"]}
        assert resolved == set(read(lock)) - {"torch"}, lock.name
