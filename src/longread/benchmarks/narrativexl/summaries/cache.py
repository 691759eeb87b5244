"""Generated texts kept inside a build directory, so a killed build resumes and regenerates nothing it has.

One JSON line per generation in ``generations.jsonl``, keyed by the sha256 of
(the model as a run's identity holds it: the backend's ``describe()`` without
where a fingerprinted model file lies; the full prompt; the generation
settings: max_tokens, stop, temperature, seed); an entry made under the
older key (the whole description) is still found. The file is only
ever appended to, one ``write`` of one whole line followed by flush and fsync,
so a kill loses at most the line being written. At start the file is read
into a dict; a half-written last line (no newline, or not JSON) is dropped,
reported (``dropped_tail``, and a log warning) and cut off the file before the
next append. A broken line anywhere else is an error naming the file and line:
that is not what a kill leaves.

:func:`cached_generate` asks the backend only for what the cache lacks, in
groups of the backend's ``preferred_batch`` (default 1), and stores each group
as soon as it is done.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from longread.errors import LongreadError
from longread.models.requests import Backend, ChatPrompt, DocumentPrompt, GenerateRequest, GenerateResult
from longread.runs.config import defining_model

logger = logging.getLogger(__name__)

CACHE_FILE = "generations.jsonl"


class GenerationCacheError(LongreadError):
    """The cache file is damaged in a way a kill cannot explain."""


def prompt_identity(prompt: str | DocumentPrompt | ChatPrompt) -> dict[str, Any]:
    """The whole prompt as JSON-able data (what the key hashes)."""
    if isinstance(prompt, ChatPrompt):
        return {"chat": [list(m) for m in prompt.messages], "system": prompt.system}
    if isinstance(prompt, DocumentPrompt):
        return {"document_prompt": dataclasses.asdict(prompt)}
    return {"text": prompt}


def generation_settings(request: GenerateRequest) -> dict[str, Any]:
    return {
        "max_tokens": request.max_tokens,
        "stop": list(request.stop),
        "temperature": request.temperature,
        "seed": request.seed,
    }


def cache_key(model: Mapping[str, str], request: GenerateRequest, *, as_before: bool = False) -> str:
    """sha256 of (the model as a run's identity holds it, full prompt, generation settings). ``as_before``:
    the key a cache made before held (the whole description: a moved model cache missed every entry)."""
    payload = {
        "model": dict(model) if as_before else defining_model(model),
        "prompt": prompt_identity(request.prompt),
        "settings": generation_settings(request),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class GenerationCache:
    """Append-only JSONL of generations inside ``directory``."""

    def __init__(self, directory: Path, model: Mapping[str, str] | None = None) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / CACHE_FILE
        self.model = dict(model) if model is not None else None
        """The model fingerprint keys are made with (None: each call's backend.describe())."""
        self.entries: dict[str, dict[str, Any]] = {}
        self.hits = 0
        """Requests answered from the cache in this session."""
        self.made = 0
        """Requests generated (and stored) in this session."""
        self.dropped_tail: str | None = None
        """The half-written last line found at start (cut off the file), if any."""
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        complete, _, tail = self.path.read_bytes().rpartition(b"\n")
        for number, raw in enumerate(complete.split(b"\n") if complete else [], start=1):
            try:
                record = json.loads(raw)
                self.entries[record["key"]] = record
            except (ValueError, KeyError, TypeError):
                raise GenerationCacheError(
                    f"{self.path}, line {number}: not a generation record (a killed build only leaves an "
                    "unfinished last line without a newline); delete the file to regenerate everything"
                ) from None
        if tail:
            # The line being written when the build was killed: drop it so the next append starts clean.
            self.dropped_tail = tail.decode("utf-8", errors="replace")
            logger.warning(
                "longread: %s: dropped a half-written last line (%d bytes) left by an interrupted build; "
                "that generation is redone",
                self.path,
                len(tail),
            )
            with self.path.open("r+b") as fh:
                fh.truncate(len(complete) + 1 if complete else 0)

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, key: str) -> GenerateResult | None:
        record = self.entries.get(key)
        if record is None:
            return None
        return GenerateResult(
            text=record["text"],
            n_prompt_tokens=record["n_prompt_tokens"],
            n_generated_tokens=record["n_generated_tokens"],
            stopped_by=record["stopped_by"],
            document_tokens_original=record.get("document_tokens_original"),
            document_tokens_kept=record.get("document_tokens_kept"),
        )

    def put(self, key: str, request: GenerateRequest, result: GenerateResult, label: str = "") -> None:
        """Append one record (one write, flushed and fsynced)."""
        record = {
            "key": key,
            "label": label,
            "settings": generation_settings(request),
            "text": result.text,
            "n_prompt_tokens": result.n_prompt_tokens,
            "n_generated_tokens": result.n_generated_tokens,
            "stopped_by": result.stopped_by,
            "document_tokens_original": result.document_tokens_original,
            "document_tokens_kept": result.document_tokens_kept,
        }
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        self.entries[key] = record


def cached_generate(
    backend: Backend,
    cache: GenerationCache,
    requests: Sequence[GenerateRequest],
    labels: Sequence[str] | None = None,
    on_generated: Callable[[int], None] | None = None,
) -> list[GenerateResult]:
    """Results for ``requests`` in order: from the cache, else generated and stored group by group.

    ``labels`` (e.g. ``"summary scene 3"``) go into the records for whoever reads the file;
    ``on_generated(n)`` is told how many requests a group just generated.
    """
    model = cache.model if cache.model is not None else backend.describe()
    keys = [cache_key(model, request) for request in requests]
    results: list[GenerateResult | None] = [
        cache.get(key) or cache.get(cache_key(model, request, as_before=True))
        for key, request in zip(keys, requests, strict=True)
    ]
    missing = [i for i, result in enumerate(results) if result is None]
    cache.hits += len(results) - len(missing)
    seen: dict[str, int] = {}
    todo = []
    for i in missing:  # the same request twice is generated once
        if keys[i] not in seen:
            seen[keys[i]] = i
            todo.append(i)
    group_size = max(1, int(getattr(backend, "preferred_batch", 1)))
    for start in range(0, len(todo), group_size):
        group = todo[start : start + group_size]
        outputs = backend.generate([requests[i] for i in group])
        for i, output in zip(group, outputs, strict=True):
            cache.put(keys[i], requests[i], output, labels[i] if labels is not None else "")
        cache.made += len(group)
        if on_generated is not None:
            on_generated(len(group))
    final = []
    for key, result in zip(keys, results, strict=True):
        found = result if result is not None else cache.get(key)
        assert found is not None
        final.append(found)
    return final
