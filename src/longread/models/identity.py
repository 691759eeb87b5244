"""Which model a description names, and whether two runs computed their numbers the same way.

A description is a run's ``config.json`` ``model`` part (a backend's ``describe()``) or the model a probe
recorded. Content hashes decide where both descriptions hold the same one; without one, any shared name
of the weights does (a served model has only its name). Two runs of the same model are computed the same
way when, besides, their architecture, dtype and device (where both record them), KV-cache press and
read-along mode (absent: none, the default; a press at ratio 0 is the full cache) are equal: only then
should their log-probs agree to the tolerance. Their windows (``max_length``) may differ: the numbers then
agree where neither window cut a row, and the report names the windows beside any difference.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from longread.model_fields import CONTENT_HASHES

NAMES = ("spec", "name", "weights", "model", "id")
"""Fields that name a model's weights (a spec, a folder, a served model's name)."""
BOTH_RECORDED = ("architecture", "dtype", "device")
"""Compared only where both descriptions hold them (a served model records none): another device computes
other last digits."""
WINDOW = "max_length"
"""The window: it decides what is cut, so runs of other windows agree only where neither cut a row. They
are compared, and the report names the windows beside any difference (:func:`window_difference`)."""
DEFAULTED = ("press", "read_along_mode")
"""Absent means the default (the full cache; one growing session): compared as given."""


def window_difference(a: Mapping[str, Any], b: Mapping[str, Any]) -> str | None:
    """``max_length 8192 ≠ 4096`` where both record a window and they differ, else None."""
    if a.get(WINDOW) and b.get(WINDOW) and str(a[WINDOW]) != str(b[WINDOW]):
        return f"{WINDOW} {a[WINDOW]} ≠ {b[WINDOW]}"
    return None


def _defaulted(model: Mapping[str, Any], key: str) -> str | None:
    """The value of a defaulted field; a press at ratio 0 (``snapkv:0``) is the full cache, as absent."""
    value = model.get(key)
    if key == "press" and isinstance(value, str) and _ratio(value) == 0:
        return None
    return str(value) if value else None


def _ratio(press: str) -> float | None:
    try:
        return float(press.rpartition(":")[2])
    except ValueError:
        return None


def model_name(model: Mapping[str, Any]) -> str:
    """How a report names a model: its spec, else its name, else its weights."""
    for key in NAMES:
        if model.get(key):
            return str(model[key])
    return "an unnamed model"


def same_model(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Do two model descriptions name the same weights? Every content hash both hold must be equal; with
    none shared, any shared name of the weights (the spec, the weights folder, a served model's name)."""
    hashes = [key for key in CONTENT_HASHES if a.get(key) and b.get(key)]
    if hashes:
        return all(a[key] == b[key] for key in hashes)
    return bool(_names(a) & _names(b))


def computed_alike(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """The same weights read the same way: numbers that should agree to the log-prob tolerance."""
    return same_model(a, b) and not how_they_differ(a, b)


def how_they_differ(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """``field a ≠ b`` for each content hash, architecture, dtype, press or read-along mode that differs
    (a hash or a recorded-by-both field only where both hold it)."""
    differing = []
    for key in (*CONTENT_HASHES, *BOTH_RECORDED):
        if a.get(key) and b.get(key) and a[key] != b[key]:
            differing.append(f"{key} {a[key]} ≠ {b[key]}")
    for key in DEFAULTED:
        if _defaulted(a, key) != _defaulted(b, key):
            differing.append(f"{key} {a.get(key) or 'none'} ≠ {b.get(key) or 'none'}")
    return differing


def share_a_name(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two descriptions share any name of the weights, whatever their hashes say."""
    return bool(_names(a) & _names(b))


def _names(model: Mapping[str, Any]) -> set[str]:
    names = set()
    for key in NAMES:
        value = model.get(key)
        if value:
            names.add(str(value).rstrip("/"))
    return names
