"""Whether runs that should agree do: the same rows of two runs, log-prob by log-prob and output by output.

For each later run of the same model, read the same way (:func:`longread.models.identity.computed_alike`:
its weights by content, architecture, dtype, press, read-along mode), on the same data under the same task
and settings as the first — the model under two backends, or under two installs — ``longread report``
compares the log-probabilities of the rows both hold against the summed-log-prob tolerance
(:mod:`longread.models.tolerance`): how many values were compared, the largest difference and how many
exceed the bound. Past the bound, the report says so: the two installs (or backends) do not compute the
same numbers. It counts the rows whose outputs (``prediction``, and ``generated`` where both rows hold one)
are the same too: for a generation task, such as a MuLD summary, that is the only comparison there is.

Runs of two different models are not compared: their numbers are not meant to agree. Runs that share a
model's name but not how it was computed are not compared either, and the report says what differs rather
than falling silent: another weights fingerprint (other weights, or a run made before weights were
fingerprinted by content), dtype or press.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from longread.models.identity import computed_alike, how_they_differ, share_a_name, window_difference
from longread.models.tolerance import summed_logprob_tolerance, tolerance_rule
from longread.report.load import RunReport
from longread.report.versions import stored_config
from longread.runs.layout import read_samples

AGREEMENT_HEADING = "The same rows in both runs (log-probs and outputs):"
LOGPROB_FIELDS = (
    ("logprobs", ("continuation_tokens", "n_tokens")),
    ("option_logprobs", ("option_tokens",)),
)
"""A row's summed log-probabilities and the field holding how many tokens each sums (per task)."""
OUTPUT_FIELDS = ("prediction", "generated")
"""What a row answered: the option it chose or the text it generated."""


@dataclass(frozen=True)
class Agreement:
    """A later run's log-probs and outputs against the first run's, on the rows (sample keys) both hold."""

    first: str
    later: str
    rows: int = 0
    values: int = 0
    largest: float | None = None
    largest_at: str | None = None
    beyond: int = 0
    """Values whose |difference| exceeds the tolerance for the tokens they sum."""
    rule: str = ""
    outputs: int = 0
    """Shared rows where both runs hold an output (:data:`OUTPUT_FIELDS`)."""
    outputs_same: int = 0
    first_different: str | None = None
    """The key of the first shared row (in the later run's order) whose outputs differ."""
    not_compared: str | None = None
    """Why runs of one model's name were not compared (what differs in how it computed)."""
    window: str | None = None
    """``max_length 8192 ≠ 4096`` where the two windows differ: a difference may be what one cut."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def agreements(runs: Sequence[RunReport]) -> list[Agreement]:
    """Each later run against the first where both asked the same question of the same model, read the
    same way; a run of the same name read another way is listed as not compared, with why."""
    if len(runs) < 2:
        return []
    first_config = stored_config(runs[0].path)[0]
    first_model = _model(first_config)
    if first_model is None:
        return []
    first_rows: dict[str, Mapping[str, Any]] | None = None
    found = []
    for run in runs[1:]:
        config = stored_config(run.path)[0]
        model = _model(config)
        if model is None or not _same_question(first_config, config):
            continue
        if computed_alike(first_model, model):
            if first_rows is None:
                first_rows = {str(row.get("key")): row for row in read_samples(runs[0].path)}
            compared = _agreement(runs[0].label, run.label, first_rows, read_samples(run.path))
            found.append(replace(compared, window=window_difference(first_model, model)))
        elif share_a_name(first_model, model):
            # not alike yet sharing a name: a content hash or a way of reading differs, and says which
            why = "; ".join(how_they_differ(first_model, model))
            found.append(Agreement(runs[0].label, run.label, not_compared=why))
    return found


def _same_question(first: Mapping[str, Any], later: Mapping[str, Any]) -> bool:
    """The same task, data (content) and settings."""
    return all(first.get(part) == later.get(part) for part in ("task", "settings")) and (
        first.get("data") or {}
    ).get("sha256") == (later.get("data") or {}).get("sha256")


def _model(config: Mapping[str, Any]) -> Mapping[str, Any] | None:
    model = config.get("model")
    return model if isinstance(model, Mapping) and model else None


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
        answered = [name for name in OUTPUT_FIELDS if name in row and name in partner]
        if answered:
            outputs += 1
            same = all(same_value(row[name], partner[name]) for name in answered)
            outputs_same += same
            if not same and first_different is None:
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
        first, later, shared, values, largest, largest_at, beyond, tolerance_rule(), outputs, outputs_same,
        first_different,
    )  # fmt: skip


def same_value(a: Any, b: Any) -> bool:
    """Equal JSON values, a NaN equal to a NaN (each run's rows are parsed apart, so ``nan != nan``)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same_value(a[key], b[key]) for key in a)
    return bool(a == b)


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


def agreement_lines(found: Sequence[Agreement]) -> list[str]:
    """One sentence per comparison, saying whether the runs compute the same log-probs and outputs."""
    lines = []
    for a in found:
        if a.not_compared is not None:
            lines.append(
                f"{a.later} against {a.first}: **not compared**: the same model's name, computed another way "
                f"({a.not_compared}): other weights, a run made before weights were fingerprinted by "
                "content, or another dtype or press."
            )
        elif not a.values:
            if a.rows:
                lines.append(
                    f"{a.later} against {a.first}: {a.rows} shared rows, no log-probs to compare; "
                    f"{_outputs_said(a)}."
                )
        else:
            cause = (
                f"the windows differ ({a.window}): a row one of them cut reads other tokens"
                if a.window
                else "these runs do not compute the same numbers"
            )
            verdict = (
                f"**{a.beyond} of {a.values} log-probs differ past the tolerance**: {cause}"
                if a.beyond
                else f"all {a.values} log-probs within the tolerance"
                + (f" (though the windows differ: {a.window})" if a.window else "")
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
