"""``longread env``: the install a bug report needs — the software record every run keeps, how torch
computes here, and whether the installed versions are the lock's."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from longread.cli.options import fail
from longread.errors import LongreadError

env_app = typer.Typer()


@env_app.command("env")
def env_command(
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Also load this model spec and print what a run records of it: its identity "
            "(weights fingerprint …) and how it computes (device, dtype, attention, threads).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")] = False,
) -> None:
    """What this install is: Python, longread, every library that can move a number, torch's threads and
    devices, and how the installed versions differ from the checkout's lock. Paste it into a bug report."""
    from longread.runs.config import current_git_commit
    from longread.runs.lock_file import differences, installed_here, read, required, venv_lock
    from longread.runs.software import compute_facts, software

    record: dict[str, Any] = {"software": software(), "git_commit": current_git_commit()}
    record["compute"] = compute_facts()
    found = venv_lock()
    if found is None:
        record["lock"] = None
    else:
        lock, extras = found
        needed = None if extras is None else required(extras)
        record["lock"] = {
            "file": str(lock),
            "extras": extras,
            "differences": differences(installed_here(), read(lock), needed),
        }
    if model is not None:
        record["model"] = _model_record(model)
    typer.echo(json.dumps(record, indent=2, sort_keys=True) if as_json else _text(record))


def _model_record(spec: str) -> dict[str, Any]:
    from longread.models.registry import load_backend

    try:
        backend = load_backend(spec)
    except LongreadError as exc:
        raise fail(exc) from None
    facts = getattr(backend, "runtime_facts", None)
    return {"identity": backend.describe(), "runtime": dict(facts()) if callable(facts) else {}}


def _text(record: dict[str, Any]) -> str:
    soft, compute = record["software"], record["compute"]
    commit = record["git_commit"]
    lines = [
        f"longread {soft['longread']}" + (f" (commit {commit})" if commit else " (no git checkout)"),
        f"Python {soft['python']} ({soft['implementation']}), {soft['platform']}, {soft['machine']}",
        f"torch threads {compute['threads']} (interop {compute['interop_threads']}); "
        f"CUDA {'yes, ' + str(compute['cuda_devices']) + ' device(s)' if compute['cuda'] else 'no'}; "
        f"MPS {'yes' if compute['mps'] else 'no'}",
        "libraries:",
    ]
    for name, version in soft["libraries"].items():
        lines.append(f"  {name:<13} {version or 'not installed'}")
    lock = record["lock"]
    if lock is None:
        lines.append("lock: none (not a checkout; a wheel's dependencies keep the ranges of its metadata)")
    elif lock["differences"]:
        lines.append(f"lock: {lock['file']}: {len(lock['differences'])} difference(s) from the lock")
        lines += [f"  {line}" for line in lock["differences"]]
        lines.append("  (`make install` in a fresh clone installs the lock; `make clean install` here)")
    else:
        lines.append(f"lock: {lock['file']}: every installed distribution is at its locked version")
    if "model" in record:
        lines.append("model (what a run records):")
        for part in ("identity", "runtime"):
            for key, value in sorted(record["model"][part].items()):
                lines.append(f"  {part}.{key}: {value}")
    return "\n".join(lines)
