"""Several requests that together make one sample: a document translated or summarised piece by piece.

A task whose baseline asks the model many times for one sample (MuLD's
translation chunk by chunk, summarisation section by section) returns a
:class:`RequestGroup`; the runner sends every part of every group in the wave
to the backend in one call (so a batching backend batches across documents)
and hands the task a :class:`GroupResult` with the parts' results in order. A
part that fails makes its whole sample an error (recorded, retried on resume):
a document with one chunk missing is never scored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class RequestGroup:
    parts: tuple[Any, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "parts", tuple(self.parts))
        if not self.parts:
            raise ValueError("a RequestGroup needs at least one request")
        if any(isinstance(part, RequestGroup) for part in self.parts):
            raise ValueError("request groups do not nest")


@dataclass(frozen=True, slots=True)
class GroupResult:
    parts: tuple[Any, ...]

    @property
    def kept_cache(self) -> dict[str, Any] | None:
        """Under a press: what it kept of every part's context, summed over the parts (``pressed_reads``
        says how many), so a sample read in pieces says what was pressed as one read does."""
        found = [getattr(part, "kept_cache", None) for part in self.parts]
        kept: list[Mapping[str, Any]] = [k for k in found if k is not None]
        if not kept or len(kept) < len(found):
            return None
        first = kept[0]
        summed: dict[str, Any] = {"press": first["press"], "compression_ratio": first["compression_ratio"]}
        for name in SUMMED_FIELDS:
            if any(name in k for k in kept):
                summed[name] = sum(k.get(name, 0) for k in kept)
        summed["kept_cache_per_layer"] = [
            sum(layer) for layer in zip(*(k["kept_cache_per_layer"] for k in kept), strict=True)
        ]
        summed["pressed_layers"] = first["pressed_layers"]
        summed["pressed_reads"] = len(kept)
        return summed


SUMMED_FIELDS = (
    "context_tokens_pressed",
    "context_tokens_unpressed",
    "kept_cache_tokens",
    "question_tokens_kept_whole",
)


def ask_grouped(send: Callable[[list[Any]], list[Any]], requests: Sequence[Any]) -> list[Any]:
    """Flatten groups into one call of ``send`` and regroup its answers (plain requests pass through)."""
    if not any(isinstance(request, RequestGroup) for request in requests):
        return send(list(requests))
    flat: list[Any] = []
    spans: list[tuple[int, int, bool]] = []
    for request in requests:
        parts = request.parts if isinstance(request, RequestGroup) else (request,)
        spans.append((len(flat), len(flat) + len(parts), isinstance(request, RequestGroup)))
        flat.extend(parts)
    answers = send(flat)
    if len(answers) != len(flat):
        raise RuntimeError(f"the backend answered {len(answers)} of {len(flat)} requests")
    return [GroupResult(tuple(answers[a:b])) if grouped else answers[a] for a, b, grouped in spans]
