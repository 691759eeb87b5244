"""Which software made each run, and whether runs that should agree do.

Every run keeps the software each of its sessions ran on (``config.json``'s ``sessions[].runtime.software``;
older runs recorded torch and transformers with the model, and a served run its server's version). With
two runs or more, ``longread report`` lists every version that differs between them, and for each later
run of the same model (its weights fingerprint, else a shared name) that read the same data under the
same task and settings as the first (the model under two backends, or under two installs) it compares
their log-probabilities row by row against the summed-log-prob tolerance
(:mod:`longread.models.tolerance`): how many values were compared, the largest difference and how many
exceed the bound. Past the bound, the report says so: the two installs (or backends) do not compute the
same numbers. It counts the rows whose outputs (``prediction``, and ``generated`` where a row holds one)
are the same too: for a generation task, such as a MuLD summary, that is the only comparison there is.
Runs of two different models are never compared: their numbers are not meant to agree.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from longread.models.tolerance import summed_logprob_tolerance, tolerance_rule
from longread.probes.memory.verdicts import same_model
from longread.report.load import RunReport
from longread.runs.layout import read_samples
from longread.runs.software import flat_versions

CONFIG_FILE = "config.json"
UNKNOWN = "not recorded"
LOGPROB_FIELDS = (
    ("logprobs", ("continuation_tokens", "n_tokens")),
    ("option_logprobs", ("option_tokens",)),
)
"""A row's summed log-probabilities and the field holding how many tokens each sums (per task)."""
AGREEMENT_HEADING = "The same rows in both runs (log-probs and outputs):"
OUTPUT_FIELDS = ("prediction", "generated")
"""What a row answered: the option it chose or the text it generated."""


@dataclass(frozen=True)
class VersionDifference:
    name: str
    values: tuple[str, ...]
    """One per run, in the report's order (``not recorded`` for a run that kept none)."""


@dataclass(frozen=True)
class Agreement:
    """A later run's log-probs against the first run's, on the rows (sample keys) both hold."""

    first: str
    later: str
    rows: int
    values: int
    largest: float | None
    largest_at: str | None
    beyond: int
    """Values whose |difference| exceeds the tolerance for the tokens they sum."""
    rule: str
    outputs: int = 0
    """Shared rows where both runs hold an output (:data:`OUTPUT_FIELDS`)."""
    outputs_same: int = 0
    first_different: str | None = None
    """The key of the first shared row (in the later run's order) whose outputs differ."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_versions(run_dir: Path) -> dict[str, str]:
    """``{name: version}`` a run was computed with; a name whose version changed between sessions gets
    every version, joined by `` + `` in session order."""
    config, sessions = _stored(run_dir)
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


def _stored(run_dir: Path) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
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


def _same_question(first: Mapping[str, Any], later: Mapping[str, Any]) -> bool:
    """The same model, task, data (content) and settings: two runs whose numbers should agree."""
    return (
        bool(first)
        and all(first.get(part) == later.get(part) for part in ("task", "settings"))
        and (first.get("data") or {}).get("sha256") == (later.get("data") or {}).get("sha256")
        and _model(first) is not None
        and _model(later) is not None
        and same_model(_model(first) or {}, _model(later) or {})
    )


def _model(config: Mapping[str, Any]) -> Mapping[str, Any] | None:
    model = config.get("model")
    return model if isinstance(model, Mapping) and model else None


def _outputs(row: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """What a row answered (its :data:`OUTPUT_FIELDS` present), or None when it holds none."""
    present = tuple((name, row[name]) for name in OUTPUT_FIELDS if name in row)
    return present or None


def _logprob_values(row: Mapping[str, Any]) -> list[tuple[str, float, int]]:
    """(field[i], value, tokens summed) for each summed log-prob a row holds."""
    found = []
    for name, count_fields in LOGPROB_FIELDS:
        values = row.get(name)
        counts = next((row[c] for c in count_fields if isinstance(row.get(c), list)), None)
        if not isinstance(values, list):
            continue
        for index, value in enumerate(values):
            if isinstance(value, int | float) and not isinstance(value, bool):
                tokens = counts[index] if counts is not None and index < len(counts) else 0
                found.append((f"{name}[{index}]", float(value), int(tokens)))
    return found


def agreements(runs: Sequence[RunReport]) -> list[Agreement]:
    """Each later run against the first where both asked the same question (task, data, settings)."""
    if len(runs) < 2:
        return []
    first_config = _stored(runs[0].path)[0]
    first_rows = {str(row.get("key")): row for row in read_samples(runs[0].path)}
    return [
        _agreement(runs[0].label, run.label, first_rows, read_samples(run.path))
        for run in runs[1:]
        if _same_question(first_config, _stored(run.path)[0])
    ]


def _agreement(
    first: str, later: str, first_rows: Mapping[str, Mapping[str, Any]], rows: Sequence[Mapping[str, Any]]
) -> Agreement:
    shared = values = beyond = outputs = outputs_same = 0
    largest: float | None = None
    largest_at: str | None = None
    first_different: str | None = None
    for row in rows:
        partner = first_rows.get(str(row.get("key")))
        if partner is None:
            continue
        shared += 1
        answered, theirs_answered = _outputs(row), _outputs(partner)
        if answered is not None and theirs_answered is not None:
            outputs += 1
            outputs_same += answered == theirs_answered
            if answered != theirs_answered and first_different is None:
                first_different = str(row.get("key"))
        mine = {name: (value, tokens) for name, value, tokens in _logprob_values(row)}
        for name, theirs, tokens in _logprob_values(partner):
            if name not in mine or math.isnan(theirs) or math.isnan(mine[name][0]):
                continue
            values += 1
            delta = abs(mine[name][0] - theirs)
            if largest is None or delta > largest:
                largest, largest_at = delta, f"{row.get('key')} {name}"
            beyond += delta > summed_logprob_tolerance(max(tokens, mine[name][1]))
    return Agreement(
        first,
        later,
        shared,
        values,
        largest,
        largest_at,
        beyond,
        tolerance_rule(),
        outputs,
        outputs_same,
        first_different,
    )


def agreement_lines(found: Sequence[Agreement]) -> list[str]:
    """One sentence per comparison, saying whether the runs compute the same log-probs and outputs."""
    lines = []
    for a in found:
        if not a.values:
            if a.rows:
                lines.append(
                    f"{a.later} against {a.first}: {a.rows} shared rows, no log-probs to compare; "
                    f"{_outputs_said(a)}."
                )
            continue
        verdict = (
            f"**{a.beyond} of {a.values} log-probs differ past the tolerance**: these runs do not compute "
            "the same numbers"
            if a.beyond
            else f"all {a.values} log-probs within the tolerance"
        )
        lines.append(
            f"{a.later} against {a.first}: {a.rows} shared rows; {verdict} ({a.rule}); largest |Δ| "
            f"{a.largest:.3g} nats ({a.largest_at}); {_outputs_said(a)}."
        )
    return lines


def _outputs_said(a: Agreement) -> str:
    if not a.outputs:
        return "no outputs to compare"
    if a.outputs_same == a.outputs:
        return f"the same output in all {a.outputs} rows"
    return (
        f"**the same output in {a.outputs_same} of {a.outputs} rows** (the first that differs: "
        f"{a.first_different})"
    )
