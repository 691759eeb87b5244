"""What a run is: the model, task, data and settings that define its results, and their hash.

The config is split by meaning rather than by a list of exceptions: ``task``,
``model``, ``data.sha256`` and ``settings`` define the results and go into
``config_hash``; ``data.path``, ``code``, ``runtime`` (limit, sample, threads,
batch sizes, prefill chunk, Ray replicas, a server's address …) and how a
model read from one fingerprinted GGUF file was pointed at (its cache
folder, the spec, the name) are recorded but do not, so a run can be
resumed after the data file or the model cache moved, after a bug fix
elsewhere in the code, with a larger ``limit`` to extend it, or with other
threads. What can move a log-prob's last digits (threads, batch sizes) is held
to a stated tolerance by re-scoring a few finished rows on resume (the runner's
``recheck``). Resuming with another model, other data or other settings is refused.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

import longread
from longread.model_fields import POINTERS, fingerprinted_whole

RUN_CONFIG_SCHEMA_VERSION = 1
_HASH_CHUNK_BYTES = 1 << 20
MOVED_TO_RUNTIME = ("threads", "prefill_chunk", "batch_size", "generate_batch_size", "torch", "transformers")
"""How a local model computes, which older runs recorded under ``model``: threads, batch sizes and the
prefill chunk (before longread 0.3), the torch and transformers versions (before the software record).
They change a log-prob only in its last digits (the order of float sums), so they are runtime now (the
backend's ``runtime_facts``, the session's ``software``) and are left out of a stored config's hash, so
those runs resume under any thread count and any install (``--recheck`` holds them to the tolerance)."""


def defining_model(model: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a model description that defines results: without how it computes
    (:data:`MOVED_TO_RUNTIME`) and, where the model is one GGUF file fingerprinted by content
    (:func:`~longread.model_fields.fingerprinted_whole`), without how it was pointed at
    (:data:`~longread.model_fields.POINTERS`: the cache folder, the spec, the name taken from the file), so
    a run resumes after the model cache moved or the file was renamed. Elsewhere a location may be the
    only name of what the fingerprint does not cover (an ``hf:`` folder's configuration and tokenizer), and
    stays."""
    dropped = set(MOVED_TO_RUNTIME)
    if fingerprinted_whole(model):
        dropped.update(POINTERS)
    return {key: value for key, value in model.items() if key not in dropped}


class DataRef(BaseModel):
    """The data file a run reads; only its content (``sha256``) defines results."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    sha256: str


class CodeVersion(BaseModel):
    """Which code made the run (recorded, not hashed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str
    git_commit: str | None = None


class RunConfig(BaseModel):
    """Everything needed to say what a run is and whether it may be resumed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = RUN_CONFIG_SCHEMA_VERSION
    task: str
    model: dict[str, Any]
    data: DataRef
    code: CodeVersion
    # Define results: prefix lengths, number of candidates, seed, truncation policy …
    settings: dict[str, Any] = {}
    # Do not define results: limit, sample, threads, batch sizes, replicas, addresses … (the session that
    # made the config; every session's runtime is in config.json's ``sessions``)
    runtime: dict[str, Any] = {}

    def result_defining(self) -> dict[str, Any]:
        """The parts of the config that ``config_hash`` covers, as plain JSON values."""
        parts = {
            "schema_version": self.schema_version,
            "task": self.task,
            "model": defining_model(self.model),
            "data": {"sha256": self.data.sha256},
            "settings": self.settings,
        }
        # A JSON round trip makes tuples lists, so a config hashes the same before and after storing.
        plain: dict[str, Any] = json.loads(canonical_json(parts))
        return plain

    @property
    def config_hash(self) -> str:
        return hashlib.sha256(canonical_json(self.result_defining()).encode("utf-8")).hexdigest()


def canonical_json(value: object) -> str:
    """One text per value: sorted keys, no spaces, no NaN (which has no JSON spelling)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def config_differences(old: RunConfig, new: RunConfig) -> dict[str, tuple[object, object]]:
    """The result-defining keys (dotted paths) whose values differ, with (old, new) values."""
    return mapping_differences(old.result_defining(), new.result_defining())


def mapping_differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, tuple[object, object]]:
    """The keys (dotted paths through nested mappings) whose values differ, with (old, new) values."""
    flat_old = _flatten(old)
    flat_new = _flatten(new)
    missing = object()
    differences: dict[str, tuple[object, object]] = {}
    for key in sorted(flat_old.keys() | flat_new.keys()):
        before, after = flat_old.get(key, missing), flat_new.get(key, missing)
        if before != after:
            differences[key] = (
                "<absent>" if before is missing else before,
                "<absent>" if after is missing else after,
            )
    return differences


def _flatten(value: Mapping[str, Any], prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for key, item in value.items():
        dotted = f"{prefix}{key}"
        if isinstance(item, Mapping) and item:
            flat.update(_flatten(item, dotted + "."))
        else:
            flat[dotted] = item
    return flat


def file_sha256(path: str | Path) -> str:
    """sha256 of a file; of a directory, of its files' relative paths and contents in sorted order.

    Hidden entries (``.cache``, a build's generation cache …) are left out of a directory's hash: they
    do not define the data.
    """
    target = Path(path)
    if target.is_dir():
        digest = hashlib.sha256(b"longread-directory-v1\0")
        for file in sorted(target.rglob("*")):
            relative = file.relative_to(target)
            if not file.is_file() or any(part.startswith(".") for part in relative.parts):
                continue
            digest.update(relative.as_posix().encode("utf-8") + b"\0")
            digest.update(file_sha256(file).encode("ascii") + b"\n")
        return digest.hexdigest()
    digest = hashlib.sha256()
    with target.open("rb") as fh:
        while chunk := fh.read(_HASH_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def current_git_commit() -> str | None:
    """The commit of the checkout longread runs from, or None (installed package, no git)."""
    package_dir = Path(longread.__file__).resolve().parent
    try:
        done = subprocess.run(
            ["git", "-C", str(package_dir), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None


def make_run_config(
    *,
    task: str,
    model: Mapping[str, Any],
    data_path: str | Path,
    settings: Mapping[str, Any] | None = None,
    runtime: Mapping[str, Any] | None = None,
) -> RunConfig:
    """A config for a new run: hashes the data file and records the code version."""
    return RunConfig(
        task=task,
        model=dict(model),
        data=DataRef(path=str(data_path), sha256=file_sha256(data_path)),
        code=CodeVersion(version=longread.__version__, git_commit=current_git_commit()),
        settings=dict(settings or {}),
        runtime=dict(runtime or {}),
    )
