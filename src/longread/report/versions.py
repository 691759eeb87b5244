"""Which software made each run, and which versions differ between runs.

Every run keeps the software each of its sessions ran on (``config.json``'s ``sessions[].runtime.software``;
older runs recorded torch and transformers with the model, and a served run its server's version). With
two runs or more, ``longread report`` lists every version that differs between them; whether their
numbers agree is :mod:`longread.report.agreement`'s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longread.report.load import RunReport
from longread.runs.software import flat_versions

CONFIG_FILE = "config.json"
UNKNOWN = "not recorded"


@dataclass(frozen=True)
class VersionDifference:
    name: str
    values: tuple[str, ...]
    """One per run, in the report's order (``not recorded`` for a run that kept none)."""


def run_versions(run_dir: Path) -> dict[str, str]:
    """``{name: version}`` a run was computed with; a name whose version changed between sessions gets
    every version, joined by `` + `` in session order."""
    config, sessions = stored_config(run_dir)
    runtimes = [session.get("runtime", {}) for session in sessions] or [config.get("runtime", {})]
    seen: dict[str, list[str]] = {}
    model = config.get("model", {}) if isinstance(config.get("model"), Mapping) else {}
    for name in ("torch", "transformers"):  # where runs made before the software record kept them
        if model.get(name):
            seen.setdefault(name, []).append(str(model[name]))
    for runtime in runtimes:
        if not isinstance(runtime, Mapping):
            continue
        for name, version in flat_versions(runtime.get("software") or {}).items():
            versions = seen.setdefault(name, [])
            if version not in versions:
                versions.append(version)
        server = (runtime.get("backend") or {}).get("server")
        if server:
            versions = seen.setdefault("server", [])
            if str(server) not in versions:
                versions.append(str(server))
    return {name: " + ".join(versions) for name, versions in seen.items()}


def stored_config(run_dir: Path) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    """A run's stored config and its sessions (empty where ``config.json`` is missing or unreadable)."""
    try:
        stored = json.loads((run_dir / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}, []
    if not isinstance(stored, Mapping):
        return {}, []
    config = stored.get("config")
    sessions = [s for s in stored.get("sessions") or [] if isinstance(s, Mapping)]
    return (dict(config) if isinstance(config, Mapping) else {}), sessions


def version_differences(recorded: Sequence[dict[str, str]]) -> list[VersionDifference]:
    """Every name whose version is not the same in all runs' ``run_versions`` (a run that recorded none
    counts)."""
    names = sorted({name for versions in recorded for name in versions})
    differing = []
    for name in names:
        values = tuple(versions.get(name, UNKNOWN) for versions in recorded)
        if len(set(values)) > 1:
            differing.append(VersionDifference(name, values))
    return differing


def versions_table(runs: Sequence[RunReport], differences: Sequence[VersionDifference]) -> str:
    """A markdown table: one row per differing name, one column per run."""
    if not differences:
        return ""
    head = "| software | " + " | ".join(run.label for run in runs) + " |"
    rule = "|---|" + "---|" * len(runs)
    rows = [f"| {d.name} | " + " | ".join(d.values) + " |" for d in differences]
    return "\n".join([head, rule, *rows])
