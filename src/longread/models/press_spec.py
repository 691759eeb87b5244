"""``--press NAME[:RATIO]``: which kvpress press compresses a local model's context cache, and how much.

Names are kvpress's class names without ``Press``, in snake case (``SnapKVPress`` → ``snapkv``,
``StreamingLLMPress`` → ``streaming_llm``; underscores are optional when matching); the ratio is the press's
``compression_ratio`` (the share of the context's cache entries dropped, 0 ≤ ratio < 1). The presses
offered are kvpress's own classes that take a ratio and nothing else (a press that wraps another press, or
needs a model of its own, is not one). kvpress is imported only to list or build a press: it lives in its
own environment (``make presses``), and a name is checked before any model loads.
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields, is_dataclass
from typing import Any

from longread.errors import LongreadError

PRESSES_ENVIRONMENT = "make presses, then run longread from .venv-presses/bin/longread"


class PressError(LongreadError):
    """A press that cannot be used as asked: unknown name or ratio, kvpress missing, a backend or task that
    cannot take one."""


@dataclass(frozen=True, slots=True)
class PressSpec:
    name: str
    """The snake-case name (``snapkv``)."""
    ratio: float
    """kvpress's ``compression_ratio``."""

    def __str__(self) -> str:
        return f"{self.name}:{self.ratio:g}"


def snake_name(class_name: str) -> str:
    """``SnapKVPress`` → ``snapkv``, ``StreamingLLMPress`` → ``streaming_llm``, ``TOVAPress`` → ``tova``."""
    stem = class_name.removesuffix("Press")
    return re.sub(r"(?<=[a-z])(?=[A-Z])(?!KV$)", "_", stem).lower()


def _key(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def kvpress_version() -> str | None:
    try:
        return importlib.metadata.version("kvpress")
    except importlib.metadata.PackageNotFoundError:
        return None


def _import_kvpress() -> Any:
    try:
        import kvpress
    except ImportError as exc:
        raise PressError(
            f"kvpress is not installed in this environment ({exc}); presses need transformers < 5.3, so "
            f"they have an environment of their own: {PRESSES_ENVIRONMENT}"
        ) from None
    return kvpress


def _takes_ratio_only(cls: type) -> bool:
    if not is_dataclass(cls):
        return False
    names = {field.name for field in fields(cls)}
    required = {
        field.name
        for field in fields(cls)
        if field.default is MISSING and field.default_factory is MISSING and field.init
    }
    return "compression_ratio" in names and required <= {"compression_ratio"}


BASES = ("BasePress", "ScorerPress")
"""kvpress's abstract classes (no scoring rule of their own)."""


def available_presses() -> dict[str, type]:
    """Snake-case name → kvpress class, for every press that takes a ratio and nothing else."""
    kvpress = _import_kvpress()
    found: dict[str, type] = {}
    for attribute in sorted(getattr(kvpress, "__all__", dir(kvpress))):
        cls = getattr(kvpress, attribute, None)
        if attribute in BASES or not attribute.endswith("Press"):
            continue
        if isinstance(cls, type) and _takes_ratio_only(cls):
            found[snake_name(attribute)] = cls
    return found


def parse_press(text: str, known: Mapping[str, type] | None = None) -> PressSpec:
    """``snapkv:0.5`` (or ``snapkv``: ratio 0.5) as a :class:`PressSpec`; an unknown name or a ratio outside
    [0, 1) is refused, naming what is known."""
    name, colon, ratio_text = text.strip().partition(":")
    presses = available_presses() if known is None else known
    by_key = {_key(known_name): known_name for known_name in presses}
    canonical = by_key.get(_key(name))
    if canonical is None:
        raise PressError(
            f"unknown press {name!r} in {text!r}; kvpress {kvpress_version() or '?'} offers: "
            + ", ".join(sorted(presses))
        )
    try:
        ratio = float(ratio_text) if colon else 0.5
    except ValueError:
        raise PressError(f"press {text!r}: the ratio must be a number in [0, 1), e.g. {name}:0.5") from None
    if not 0.0 <= ratio < 1.0:
        raise PressError(f"press {text!r}: the ratio (kvpress's compression_ratio) must be in [0, 1)")
    return PressSpec(canonical, ratio)


def build_press(spec: PressSpec) -> Any:
    """The kvpress object for ``spec``."""
    cls = available_presses()[spec.name]
    return cls(compression_ratio=spec.ratio)
